package projection

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// followMem starts p following msgs in memory; stop cancels it and
// returns Follow's error.
func followMem(t *testing.T, p *Projector, msgs []message) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Follow(ctx, memSource{msgs}) }()
	return func() error {
		cancel()
		return <-done
	}
}

// Once FlushEvery commits are pending, Follow's flusher writes the
// checkpoint while the fold goes on; the fold waits only when the flusher
// has fallen a whole batch behind. Here the flusher is held (the
// checkpoint lock taken): the fold passes FlushEvery, stops at twice it,
// and finishes once the lock is let go.
func TestFoldGoesOnWhileTheFlusherWrites(t *testing.T) {
	msgs, _ := echoStream(t, 1)
	path := filepath.Join(t.TempDir(), "p.db")
	p := quietProjector(t, path)
	p.opts.FlushEvery = 8
	p.flushMu.Lock()
	stop := followMem(t, p, msgs)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.WaitFor(ctx, 15); err != nil {
		p.flushMu.Unlock()
		t.Fatalf("the fold waited for the checkpoint it asked for: %v (at %d)", err, p.Seq())
	}
	time.Sleep(50 * time.Millisecond)
	if seq := p.Seq(); seq != 16 {
		p.flushMu.Unlock()
		t.Fatalf("with the flusher a batch behind, the fold is at %d, want 16 (it writes the checkpoint itself)", seq)
	}
	p.flushMu.Unlock()
	if err := p.WaitFor(ctx, uint64(len(msgs))); err != nil {
		t.Fatal(err)
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v, want context.Canceled", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = quietProjector(t, path)
	defer p.Close()
	if got := p.Seq(); got != uint64(len(msgs)) {
		t.Fatalf("checkpoint at %d, want %d", got, len(msgs))
	}
}

// A checkpoint that cannot be written stops Follow with its error, after
// at most a batch more commits than FlushEvery, though the flusher is the
// one that meets it first.
func TestFollowStopsWhenCheckpointsFail(t *testing.T) {
	msgs, _ := echoStream(t, 1)
	p := quietProjector(t, filepath.Join(t.TempDir(), "p.db"))
	p.opts.FlushEvery = 8
	restore := p.FailWrites(t)
	stop := followMem(t, p, msgs)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := p.WaitFor(ctx, uint64(len(msgs)))
	if err == nil || !strings.Contains(err.Error(), "projector stopped after stream sequence") {
		t.Fatalf("WaitFor = %v, want the projector stopped", err)
	}
	if seq := p.Seq(); seq > 16 {
		t.Errorf("the projector stopped at %d, want at most 16", seq)
	}
	if err := stop(); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("Follow = %v, want the checkpoint's error", err)
	}
	restore()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
