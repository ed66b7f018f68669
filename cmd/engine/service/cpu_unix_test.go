//go:build unix

package service_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used so far:
// the embedded server and both hosts alike, since all run in the process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
