package projection

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/stepgate/stepgate/events"
	bolt "go.etcd.io/bbolt"
)

// Source is the stream a projector follows.
type Source interface {
	// Follow delivers every message with a stream sequence ≥ from, in order,
	// to fn (its sequence, subject and encoded commit), and keeps following
	// until ctx ends or fn returns an error; it returns that error.
	Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error
}

// Options tune a projector. The zero value is usable.
type Options struct {
	// FlushEvery writes a checkpoint after this many applied commits; default 4096.
	FlushEvery int
	// FlushInterval writes a checkpoint at least this often while commits
	// arrive; default one second.
	FlushInterval time.Duration
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
	dirty    map[string]map[int]bool // run → dirty steps (the header is always rewritten)
	pending  int                     // commits applied since the last checkpoint
	replayed int                     // commits applied by Follow since Open
	changed  chan struct{}           // closed and replaced whenever seq advances
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
		FreelistType: bolt.FreelistMapType, NoFreelistSync: true})
	if err != nil {
		return nil, fmt.Errorf("open checkpoint %s: %w", path, err)
	}
	p := &Projector{db: db, opts: opts, log: opts.Logger, runs: map[string]*Run{},
		dirty: map[string]map[int]bool{}, changed: make(chan struct{})}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := initBuckets(tx); err != nil {
			return err
		}
		p.seq = readSeq(tx)
		return nil
	})
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

// Follow applies the stream from the checkpoint's sequence + 1 until ctx ends
// or a commit cannot be applied, writing checkpoints in batches. On return it
// writes a final checkpoint. A commit that cannot be applied stops the
// projector: Follow returns an error naming the last sequence applied, and
// waiters get it too.
func (p *Projector) Follow(parent context.Context, src Source) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(p.opts.FlushInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := p.Flush(); err != nil {
					p.log.Error("projection checkpoint failed; the log stays the truth", "err", err)
				}
			}
		}
	})
	err := src.Follow(ctx, p.Seq()+1, p.applyStream)
	cancel()
	wg.Wait()
	if ferr := p.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil && parent.Err() == nil {
		p.fail(err)
	}
	return err
}

func (p *Projector) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = fmt.Errorf("projector stopped after stream sequence %d: %w", p.seq, err)
		close(p.changed)
		p.changed = make(chan struct{})
	}
}

// applyStream applies one message delivered in stream order. A run commit
// that its own host already folded (ApplyOwn) is not even decoded.
func (p *Projector) applyStream(seq uint64, subject string, data []byte) error {
	if p.advanceIfApplied(seq, subject) {
		return nil
	}
	c, err := events.Unmarshal(data)
	if err != nil {
		return fmt.Errorf("stream sequence %d: %w", seq, err)
	}
	for _, e := range c.Events {
		if u, ok := e.(events.Unknown); ok {
			p.log.Warn("skipping an event this build cannot read", "seq", seq, "type", u.Type, "v", u.V)
		}
	}
	p.mu.Lock()
	if seq <= p.seq {
		p.mu.Unlock()
		return nil
	}
	if err := p.applyLocked(seq, c); err != nil {
		p.mu.Unlock()
		return err
	}
	p.advanceLocked(seq)
	flush := p.pending >= p.opts.FlushEvery
	p.mu.Unlock()
	if flush {
		return p.Flush()
	}
	return nil
}

// advanceIfApplied advances the projector past seq without decoding it when
// seq is a commit of a run in memory that already holds it.
func (p *Projector) advanceIfApplied(seq uint64, subject string) bool {
	run, ok := events.IsRunSubject(subject)
	if !ok {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.runs[run]
	if r == nil || seq > r.LastSeq || seq <= p.seq {
		return false
	}
	p.advanceLocked(seq)
	return true
}

// advanceLocked records seq as applied and wakes waiters.
func (p *Projector) advanceLocked(seq uint64) {
	p.seq = seq
	p.replayed++
	p.pending++
	close(p.changed)
	p.changed = make(chan struct{})
}

// applyLocked folds a commit into its run. Commits outside runs belong to
// projections added later and are skipped here.
func (p *Projector) applyLocked(seq uint64, c *events.Commit) error {
	if c.Run == "" {
		return nil
	}
	r, err := p.runLocked(c.Run)
	if err != nil {
		return err
	}
	if r == nil {
		r = &Run{ID: c.Run}
	}
	if seq <= r.LastSeq {
		return nil // applied already by its own host (read-your-writes)
	}
	before := len(r.Steps)
	if err := r.Apply(seq, c); err != nil {
		delete(p.runs, c.Run) // partly applied: reload from the checkpoint if asked again
		return fmt.Errorf("apply stream sequence %d: %w", seq, err)
	}
	p.runs[c.Run] = r
	d := p.dirty[c.Run]
	if d == nil {
		d = map[int]bool{}
		p.dirty[c.Run] = d
	}
	if c.Step > 0 {
		d[c.Step] = true
	}
	for n := before + 1; n <= len(r.Steps); n++ {
		d[n] = true
	}
	return nil
}

// ApplyOwn folds a run commit that this host just committed at seq, so that
// the committing handler reads its own write without waiting for the
// stream. The stream's copy is skipped later because seq ≤ the run's LastSeq.
// The caller must hold the run's commit order (it committed with the run's
// last sequence as expectation and the server accepted it).
func (p *Projector) ApplyOwn(seq uint64, c *events.Commit) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.applyLocked(seq, c)
}

// runLocked returns the run from memory or the checkpoint; nil if unknown.
func (p *Projector) runLocked(id string) (*Run, error) {
	if r, ok := p.runs[id]; ok {
		return r, nil
	}
	var r *Run
	err := p.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = loadRun(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r != nil {
		p.runs[id] = r
	}
	return r, nil
}

// View calls fn with the run while holding the projector's lock, so fn sees a
// consistent run and must not keep r or block. It reports whether the run
// exists.
func (p *Projector) View(id string, fn func(r *Run)) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, err := p.runLocked(id)
	if err != nil || r == nil {
		return false, err
	}
	fn(r)
	return true, nil
}

// WaitFor blocks until the projector has applied stream sequence seq, the
// projector failed, or ctx ends.
func (p *Projector) WaitFor(ctx context.Context, seq uint64) error {
	for {
		p.mu.Lock()
		cur, ch, failed := p.seq, p.changed, p.failed
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

// Flush writes a checkpoint of everything applied so far.
func (p *Projector) Flush() error {
	p.flushMu.Lock()
	defer p.flushMu.Unlock()
	b, err := p.takeBatch()
	if err != nil || b == nil {
		return err
	}
	if err := writeBatch(p.db, b); err != nil {
		p.mu.Lock()
		p.pending = p.opts.FlushEvery // retry at the next commit
		p.mu.Unlock()
		return fmt.Errorf("write checkpoint at stream sequence %d: %w", b.seq, err)
	}
	return nil
}

// takeBatch encodes the dirty state under the lock and clears it.
func (p *Projector) takeBatch() (*batch, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending == 0 && len(p.dirty) == 0 {
		return nil, nil
	}
	b := &batch{seq: p.seq, runs: map[string][]byte{}, steps: map[string][]byte{}}
	for id, steps := range p.dirty {
		r := p.runs[id]
		h, err := encodeHeader(r)
		if err != nil {
			return nil, err
		}
		b.runs[id] = h
		for n := range steps {
			s, err := jsonMarshal(r.Step(n))
			if err != nil {
				return nil, err
			}
			b.steps[string(stepKey(id, n))] = s
		}
	}
	p.dirty = map[string]map[int]bool{}
	p.pending = 0
	return b, nil
}

// Close writes a final checkpoint and closes the database.
func (p *Projector) Close() error {
	err := p.Flush()
	if cerr := p.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// Summary is one line of a run listing.
type Summary struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Status  Status `json:"status"`
	Cause   string `json:"cause,omitempty"`
	Steps   int    `json:"steps"`
	LastSeq uint64 `json:"last_seq"`
}

// Summary returns the run's listing line.
func (r *Run) Summary() Summary {
	s := Summary{ID: r.ID, Agent: r.Snapshot.Agent, Status: r.Status, Steps: len(r.Steps), LastSeq: r.LastSeq}
	if r.End != nil {
		s.Cause = r.End.Cause
	}
	return s
}

// Runs lists every run known to the projection, ordered by id (so by start
// time).
func (p *Projector) Runs() ([]Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	var out []Summary
	add := func(r *Run) {
		seen[r.ID] = true
		out = append(out, r.Summary())
	}
	for _, r := range p.runs {
		add(r)
	}
	err := p.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRuns).ForEach(func(k, _ []byte) error {
			if seen[string(k)] {
				return nil
			}
			r, err := loadRun(tx, string(k))
			if err != nil {
				return err
			}
			add(r)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// All returns a deep copy of every run, for verification and tests.
func (p *Projector) All() (map[string]*Run, error) {
	sums, err := p.Runs()
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Run, len(sums))
	for _, s := range sums {
		var cp *Run
		if _, err := p.View(s.ID, func(r *Run) { cp, err = deepCopy(r) }); err != nil {
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		out[s.ID] = cp
	}
	return out, nil
}
