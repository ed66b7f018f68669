package commands

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/step"
)

// fleet is what this host knows of where locations are: its own
// declaration (Config.Locations), the other hosts' (the holders bucket),
// their leases' states (the takeovers' watch), and the places it checked.
// Safe for concurrent use.
type fleet struct {
	self   string
	globs  []string
	places executor.Places
	fwd    Forwarder // nil: this host forwards nothing

	mu      sync.Mutex
	holders map[string]step.Holder
	leases  map[string]string // host → its lease record's state as last seen
}

func newFleet(self string, globs []string, fwd Forwarder) *fleet {
	return &fleet{self: self, globs: globs, fwd: fwd, holders: map[string]step.Holder{}, leases: map[string]string{}}
}

// declares reports whether globs take in the directory loc: no globs take in
// every directory (a host that declares nothing holds what exists on its
// own filesystem).
func declares(globs []string, loc string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := doublestar.PathMatch(g, loc); ok {
			return true
		}
	}
	return false
}

// CheckLocations checks a host's declaration (see Config.Locations): clean
// absolute paths, valid doublestar patterns.
func CheckLocations(globs []string) error {
	for _, g := range globs {
		if !filepath.IsAbs(g) || filepath.Clean(g) != g {
			return fmt.Errorf("location glob %q: must be a clean absolute path: %w", g, ErrInvalidRequest)
		}
		if !doublestar.ValidatePathPattern(g) {
			return fmt.Errorf("location glob %q: not a valid pattern: %w", g, ErrInvalidRequest)
		}
	}
	return nil
}

// mayHold returns nil when this host declares loc and has a directory there
// (what a run may be started in here), else why not, wrapping
// ErrNotHolder.
func (f *fleet) mayHold(loc string) error {
	if !declares(f.globs, loc) {
		return fmt.Errorf("location %s: host %s does not hold it (its --locations do not take it in): %w", loc, f.self, ErrNotHolder)
	}
	fi, err := os.Stat(loc)
	if err != nil {
		return fmt.Errorf("location %s: not on host %s: %w: %w", loc, f.self, ErrNotHolder, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("location %s: not a directory on host %s: %w", loc, f.self, ErrNotHolder)
	}
	return nil
}

// holds returns nil when this host holds the run's location loc as place p
// (nil: a run started before placement, held wherever the directory
// exists), else why not, wrapping ErrNotHolder.
func (f *fleet) holds(loc string, p *events.Place) error {
	if err := f.mayHold(loc); err != nil || p == nil {
		return err
	}
	if err := f.places.Check(loc, placeOf(p), f.self); err != nil {
		return fmt.Errorf("on host %s: %w: %w", f.self, err, ErrNotHolder)
	}
	return nil
}

// placeOf and pinned convert a place between the log's form and the
// executor's.
func placeOf(p *events.Place) executor.Place {
	return executor.Place{ID: p.ID, DirIno: p.DirIno, MarkIno: p.MarkIno, Host: p.Host}
}

func pinned(p executor.Place) *events.Place {
	return &events.Place{ID: p.ID, DirIno: p.DirIno, MarkIno: p.MarkIno, Host: p.Host}
}

// sawHolder records one update of the holders bucket.
func (f *fleet) sawHolder(u *step.HolderUpdate) {
	if u == nil || u.Host == f.self || u.Err != nil && !u.Deleted {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if u.Deleted {
		delete(f.holders, u.Host)
		return
	}
	f.holders[u.Host] = u.Holder
}

// sawLease records the state of another host's lease record.
func (f *fleet) sawLease(u *step.LeaseUpdate) {
	if u == nil || u.Host == f.self || u.Err != nil && !u.Deleted {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if u.Deleted {
		delete(f.leases, u.Host)
		return
	}
	f.leases[u.Host] = u.Lease.State
}

// live reports whether host's lease, as last seen, is held (or not seen
// at all: a host without leases); the caller holds f.mu.
func (f *fleet) live(host string) bool {
	s, ok := f.leases[host]
	return !ok || s == step.LeaseHeld
}

// candidates returns the other live hosts that declare loc: prefer first
// (the host that ran the run's last step), then the others in an order
// spread by key (rendezvous hashing: a run's steps go to one holder of a
// shared volume while it lives, and runs spread over its holders).
func (f *fleet) candidates(loc, key, prefer string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for host, h := range f.holders {
		if f.live(host) && declares(h.Locations, loc) {
			out = append(out, host)
		}
	}
	weight := func(host string) uint64 {
		if host == prefer {
			return 0
		}
		sum := fnv.New64a()
		_, _ = sum.Write([]byte(key + "\x00" + host))
		return sum.Sum64() | 1
	}
	slices.SortFunc(out, func(a, b string) int {
		wa, wb := weight(a), weight(b)
		switch {
		case wa < wb:
			return -1
		case wa > wb:
			return 1
		}
		return 0
	})
	return out
}
