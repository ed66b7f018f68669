//go:build !unix

package service_test

import "time"

// cpuTime is not measured on this platform: no CPU figure is reported.
func cpuTime() time.Duration { return 0 }
