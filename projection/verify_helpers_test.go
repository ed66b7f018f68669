package projection

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"
)

// followOpts are a projector's options when a test drives its flusher: a
// checkpoint every few commits and every millisecond, so that Follow's own
// flusher writes it while the fold goes on.
func followOpts(flushEvery int) Options {
	return Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), FlushEvery: flushEvery,
		FlushInterval: time.Millisecond}
}

// checkpointSeq is the stream sequence p's checkpoint file holds (not the
// one p applied).
func checkpointSeq(t fataler, p *Projector) uint64 {
	var seq uint64
	if err := p.db.View(func(tx *bolt.Tx) error { seq = readSeq(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	return seq
}

// followUntilCheckpointed opens the checkpoint at path, follows msgs with
// Follow (its flusher and its fold on their own goroutines) until the
// flusher has written a checkpoint of every message, stops it and closes
// it. It fails if the projector does not start where its checkpoint
// stood (want), if Follow stops for anything but its context, or if the
// flusher does not write within a minute (a crashed flusher takes the
// whole test binary with it).
func followUntilCheckpointed(t fataler, path string, opts Options, msgs []message, want uint64) {
	p, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := p.Seq(); got != want {
		t.Fatalf("reopened at stream sequence %d, want %d (its checkpoint)", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	follow, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Follow(follow, memSource{msgs}) }()
	last := uint64(len(msgs))
	err = p.WaitFor(ctx, last)
	for err == nil && checkpointSeq(t, p) < last { // the flusher's own checkpoint, not Close's
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	stop()
	if ferr := <-done; !errors.Is(ferr, context.Canceled) {
		t.Fatalf("Follow = %v, want it stopped only by its context", ferr)
	}
	if err != nil {
		t.Fatalf("following %d messages (at %d, checkpoint at %d): %v", last, p.Seq(), checkpointSeq(t, p), err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// verifyCheckpoint is `engine verify` on the checkpoint at path: a new
// projector opened on it, compared projection by projection with a
// rebuild of msgs from sequence 1.
func verifyCheckpoint(t fataler, path string, opts Options, msgs []message) {
	p, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := p.Projections()
	if err != nil {
		t.Fatalf("read the checkpoint: %v", err)
	}
	want, err := Rebuild(context.Background(), memSource{msgs}, uint64(len(msgs)))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Rebuilt{}), cmpopts.IgnoreFields(Rebuilt{}, "GrantLog")); d != "" {
		t.Fatalf("verify: the checkpoint differs from a rebuild from sequence 1 (-rebuild +checkpoint):\n%s", d)
	}
}

// followRestartVerify drives msgs through everything a host does with
// them: Follow folds msgs[:cut] while its flusher checkpoints them, the
// host stops; a new projector on the same file starts from that
// checkpoint and follows the rest, checkpointing again; and verify
// compares the last checkpoint with a rebuild from sequence 1.
func followRestartVerify(t fataler, path string, opts Options, msgs []message, cut int) {
	followUntilCheckpointed(t, path, opts, msgs[:cut], 0)
	followUntilCheckpointed(t, path, opts, msgs, uint64(cut))
	verifyCheckpoint(t, path, opts, msgs)
}
