package commands

import "sync"

// runLocks gives each run its own lock: one committer per run per host.
// Runs never share a lock (striped locks made two runs that hashed alike
// wait for each other's whole step, commit round trip included), and the
// table holds only the runs someone holds or waits for.
type runLocks struct {
	mu   sync.Mutex
	runs map[string]*runLock
	free []*runLock // entries no run uses, for the next lock
}

// runLock is one run's lock, held by whoever lock returned it to.
type runLock struct {
	sync.Mutex
	table *runLocks
	run   string
	users int // holders and waiters; the entry goes when it drops to 0
}

// lock locks run; the caller unlocks it with the returned lock's unlock.
func (l *runLocks) lock(run string) *runLock {
	l.mu.Lock()
	if l.runs == nil {
		l.runs = map[string]*runLock{}
	}
	rl := l.runs[run]
	if rl == nil {
		if n := len(l.free); n > 0 {
			rl, l.free = l.free[n-1], l.free[:n-1]
		} else {
			rl = &runLock{table: l}
		}
		rl.run = run
		l.runs[run] = rl
	}
	rl.users++
	l.mu.Unlock()
	rl.Lock()
	return rl
}

// unlock releases the run; the entry is kept for reuse when nobody else
// holds or waits for it.
func (rl *runLock) unlock() {
	rl.Unlock()
	l := rl.table
	l.mu.Lock()
	if rl.users--; rl.users == 0 {
		delete(l.runs, rl.run)
		if len(l.free) < maxFreeLocks {
			rl.run = ""
			l.free = append(l.free, rl)
		}
	}
	l.mu.Unlock()
}

// maxFreeLocks bounds the entries kept for reuse: about the runs a host
// drives at once.
const maxFreeLocks = 256

// held returns how many runs have a lock entry (held or waited for).
func (l *runLocks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs)
}
