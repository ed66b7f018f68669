package projection

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Options tune a projector. The zero value is usable.
type Options struct {
	// FlushEvery writes a checkpoint after this many applied commits; default 4096.
	FlushEvery int
	// FlushInterval writes a checkpoint at least this often while commits
	// arrive; default one second.
	FlushInterval time.Duration
	// NoTail keeps Follow from reading the stream's tail: other hosts'
	// commits are folded only when a caller asks (Sync, SyncTo), by direct
	// gets. For tests of a host that is behind the stream.
	NoTail bool
	// Logger receives warnings (unknown events); default slog.Default().
	Logger *slog.Logger
}

// Projector folds the stream into the runs projection and checkpoints it into
// bbolt in batches: never one bbolt transaction per commit. All methods are
// safe for concurrent use.
type Projector struct {
	db   *bolt.DB
	opts Options
	log  *slog.Logger

	flushMu sync.Mutex // serialises checkpoint writes

	mu       sync.Mutex
	seq      uint64                  // last stream sequence applied
	runs     map[string]*Run         // runs in memory: every dirty run is here
	lazy     map[string]stubs        // run → steps still in their checkpoint form
	dirty    map[string]map[int]bool // run → dirty steps (the header is always rewritten)
	pending  int                     // commits applied since the last checkpoint
	replayed int                     // commits applied by Follow since Open
	own      map[uint64]bool         // sequences above seq already folded by ApplyOwn
	ownMax   uint64                  // the highest sequence ApplyOwn folded ahead of seq
	ownN     atomic.Uint64           // commits ApplyOwn folded: a paused tail resumes when it stays still
	tail     tailCount               // what the tail's deliveries brought (see pause.go)
	tailOn   atomic.Bool             // the tail is being read
	resume   chan struct{}           // asks a paused tail to be read again: a long gap to bring
	idx      indexes                 // tickets, open runs, grants
	bl       blobs                   // header parts runs share
	idxDirty indexDirt               // what of idx the next checkpoint writes
	regVer   atomic.Uint64           // bumped at every registry change
	grantVer atomic.Uint64           // bumped at every grant change
	src      atomic.Pointer[Source]  // the stream Follow reads, for SyncTo
	fetching chan struct{}           // held by the one caller fetching a gap (fetchUpTo)
	flushNow chan struct{}           // asks Follow's flusher for a checkpoint now: FlushEvery commits are pending
	flushBad atomic.Bool             // the last checkpoint failed
	changed  chan struct{}           // closed at the next change; nil while nobody waits
	failed   error                   // set when the projector stopped on a commit
}

// Open opens (or creates) the checkpoint at path and loads its sequence. Runs
// are loaded lazily when first needed.
func Open(path string, opts Options) (*Projector, error) {
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 4096
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	// A large initial mapping keeps bbolt from re-mapping (and copying every
	// node) as the checkpoint grows; it is address space, not memory.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, InitialMmapSize: 1 << 30,
		FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, fmt.Errorf("open checkpoint %s: %w", path, err)
	}
	p := &Projector{db: db, opts: opts, log: opts.Logger, runs: map[string]*Run{},
		dirty: map[string]map[int]bool{}, own: map[uint64]bool{}, lazy: map[string]stubs{},
		flushNow: make(chan struct{}, 1), fetching: make(chan struct{}, 1), resume: make(chan struct{}, 1),
		idx: newIndexes(), idxDirty: newIndexDirt(), bl: newBlobs()}
	err = initBuckets(db)
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error {
			p.seq = readSeq(tx)
			return loadIndexes(tx, &p.idx)
		})
	}
	for _, id := range p.idx.migrated {
		p.idxDirty.pending[id] = true
	}
	p.idx.migrated = nil
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open checkpoint %s: %w", path, err)
	}
	return p, nil
}

// Seq returns the last stream sequence applied.
func (p *Projector) Seq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// Replayed returns how many commits Follow applied since Open: after a
// restart, only the tail past the checkpoint.
func (p *Projector) Replayed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replayed
}

// advanceLocked records seq as applied and wakes waiters; replayed says the
// commit was read from the stream and folded here. Whoever folded seq, it
// is no longer ahead of the projector.
func (p *Projector) advanceLocked(seq uint64, replayed bool) {
	p.seq = seq
	delete(p.own, seq)
	if replayed {
		p.replayed++
	}
	p.pending++
	p.notifyLocked()
}

// notifyLocked wakes everyone waiting for the projection to change.
func (p *Projector) notifyLocked() {
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

// watchLocked returns the channel the next change closes, made on demand:
// most changes have nobody waiting for them.
func (p *Projector) watchLocked() <-chan struct{} {
	if p.changed == nil {
		p.changed = make(chan struct{})
	}
	return p.changed
}

// Changed returns a channel closed at the next change of the projection
// (a commit folded from the stream or by its own host).
func (p *Projector) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watchLocked()
}

// runLocked returns the run from memory or the checkpoint; nil if unknown.
func (p *Projector) runLocked(id string) (*Run, error) {
	if r, ok := p.runs[id]; ok {
		return r, nil
	}
	r, lazy, err := p.loadCold(id)
	if err != nil {
		return nil, err
	}
	delete(p.lazy, id)
	if r != nil {
		p.runs[id] = r
		if !lazy.empty() {
			p.lazy[id] = lazy
		}
	}
	return r, nil
}

// loadCold reads run id from the checkpoint, keeping nothing: the run
// (nil if the checkpoint does not hold it) and its steps still stubs.
func (p *Projector) loadCold(id string) (r *Run, lazy stubs, err error) {
	err = p.db.View(func(tx *bolt.Tx) error {
		var err error
		r, lazy, err = loadRun(tx, &p.bl, id)
		return err
	})
	return r, lazy, err
}

// decodeLocked makes the steps ns of r whole where they are still stubs
// from the checkpoint, reading them in one transaction (a number out of
// range, or of a whole step, needs nothing).
func (p *Projector) decodeLocked(r *Run, ns ...int) error {
	lazy := p.lazy[r.ID]
	var stubs []int
	for _, n := range ns {
		if lazy.has(n) {
			stubs = append(stubs, n)
		}
	}
	if len(stubs) == 0 {
		return nil
	}
	err := p.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSteps)
		for _, n := range stubs {
			if err := decodeStep(r, n, b.Get(stepKey(r.ID, n))); err != nil {
				return err
			}
			lazy.remove(n)
		}
		return nil
	})
	if lazy.empty() {
		delete(p.lazy, r.ID)
	}
	return err
}

// WaitFor blocks until the projector has applied stream sequence seq, the
// projector failed, or ctx ends.
func (p *Projector) WaitFor(ctx context.Context, seq uint64) error {
	for {
		p.mu.Lock()
		cur, failed := p.seq, p.failed
		var ch <-chan struct{}
		if cur < seq && failed == nil {
			ch = p.watchLocked()
		}
		p.mu.Unlock()
		if cur >= seq {
			return nil
		}
		if failed != nil {
			return failed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for stream sequence %d (at %d): %w", seq, cur, ctx.Err())
		}
	}
}

// Close writes a final checkpoint and closes the database.
func (p *Projector) Close() error {
	err := p.Flush()
	if cerr := p.db.Close(); err == nil {
		err = cerr
	}
	return err
}
