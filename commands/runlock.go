package commands

import "sync"

// runLocks gives each run its own lock: one committer per run per host.
// Runs never share a lock (striped locks made two runs that hashed alike
// wait for each other's whole step, commit round trip included), and the
// table holds only the runs someone holds or waits for.
type runLocks struct {
	mu   sync.Mutex
	runs map[string]*runLock
}

type runLock struct {
	sync.Mutex
	users int // holders and waiters; the entry goes when it drops to 0
}

// lock locks run and returns its unlock.
func (l *runLocks) lock(run string) (unlock func()) {
	l.mu.Lock()
	if l.runs == nil {
		l.runs = map[string]*runLock{}
	}
	rl := l.runs[run]
	if rl == nil {
		rl = &runLock{}
		l.runs[run] = rl
	}
	rl.users++
	l.mu.Unlock()
	rl.Lock()
	return func() {
		rl.Unlock()
		l.mu.Lock()
		if rl.users--; rl.users == 0 {
			delete(l.runs, run)
		}
		l.mu.Unlock()
	}
}

// held returns how many runs have a lock entry (held or waited for).
func (l *runLocks) held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.runs)
}
