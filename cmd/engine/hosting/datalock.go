package hosting

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dataLockFile names the lock file of a data directory: one engine process
// at a time keeps its server storage and checkpoints there. The lock is an
// advisory flock, so it goes with the process however it ends (kill -9
// included); the file holds the holder's pid for the error message.
const dataLockFile = "lock"

// ErrDataInUse means another process holds the data directory.
var ErrDataInUse = errors.New("data directory in use")

// LockData takes dir's lock for this process, or fails at once with
// ErrDataInUse when another process holds it. release lets it go.
func LockData(dir string) (release func() error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	path := filepath.Join(dir, dataLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		holder := "another process"
		if pid := strings.TrimSpace(string(b)); pid != "" {
			holder = "process " + pid
		}
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w by %s (one engine per data directory: stop it, use another --data, or talk to it with --nats): %w",
				dir, ErrDataInUse, holder, err)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() error {
		uerr := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return errors.Join(uerr, f.Close())
	}, nil
}
