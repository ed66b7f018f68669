//go:build unix

package bench

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used so far:
// server, client, engine and garbage collector alike, since the embedded
// server runs in the process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
