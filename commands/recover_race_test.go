package commands_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// A host that restarts while another host settles what it left in doubt
// (the other took its lease over) loses the race for that step's commit:
// its recovery looks again at the run as it now stands, finds nothing left
// to settle, and the host starts. It failed to start instead ("recover run
// …: commit conflict: the run moved on"), seen in the cluster's host-kill
// trials.
func TestRecoveryThatLosesTheRaceLooksAgain(t *testing.T) {
	const rules = "agents:\n  build:\n    permission:\n      read: { \"*\": allow, \"a.txt\": ask }\n"
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, rules)
	ctx := ctxT(t)
	loc := t.TempDir()
	writeAt(t, loc, "a.txt", "the file\n")
	run := startIn(t, h, loc, "p1")
	out := submit(t, h, run, 1, call("c", "read", builtin.ReadInput{Path: "a.txt"}))
	if len(out.Tickets) != 1 {
		t.Fatalf("the read: %+v, want one ticket", out.Results)
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops-1"}); err != nil {
		t.Fatal(err)
	}
	s2, log2, last := copiedUntilResolve(t, h, run)
	// h1 restarting: its projection has read the log as it was, and its
	// follower is slow to bring it the other host's commit (it holds what
	// comes after `last` until release).
	proj, err := projection.Open(filepath.Join(t.TempDir(), "p.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer proj.Close()
	release := make(chan struct{})
	fctx, stopFollow := context.WithCancel(ctx)
	followed := make(chan error, 1)
	go func() { followed <- proj.Follow(fctx, heldSource{log2, last, release}) }()
	defer func() { stopFollow(); <-followed }()
	if err := proj.SyncTo(ctx, last); err != nil {
		t.Fatal(err)
	}
	var cnt executortest.Counts
	reg := executortest.Registry(t, &cnt) // the built-in tools among them
	restarting, err := commands.New(log2, proj, reg, commands.Config{Host: "h1", ToolOutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile another host, which took h1's lease over, settles the step.
	other := startHost(t, s2, executortest.Registry(t, &cnt), "h2")
	res, err := other.RecoverHost(ctx, commands.RecoverRequest{Host: "h1"})
	if err != nil || len(res.Steps) != 1 {
		t.Fatalf("the other host's recovery of h1: %+v %v, want step 1 settled", res, err)
	}
	time.AfterFunc(700*time.Millisecond, func() { close(release) })
	if err := restarting.Recover(ctx); err != nil {
		t.Fatalf("the restarting host's recovery, behind the other host's commit: %v", err)
	}
	r, err := other.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if s1 := r.Step(1); s1 == nil || !s1.Final || s1.Calls[0].Attempts != 1 {
		t.Fatalf("step 1 after both recoveries: %+v, want it final, its read run once", s1)
	}
}

// heldSource is a log whose messages after hold reach a follower only once
// release is closed: a follower that is behind.
type heldSource struct {
	log     *step.Log
	hold    uint64
	release <-chan struct{}
}

func (h heldSource) wait(ctx context.Context, seq uint64) error {
	if seq <= h.hold {
		return nil
	}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h heldSource) LastSeq(ctx context.Context) (uint64, error) {
	select {
	case <-h.release:
		return h.log.LastSeq(ctx)
	default:
		return h.hold, nil
	}
}

func (h heldSource) Get(ctx context.Context, seq uint64) (string, []byte, bool, error) {
	if err := h.wait(ctx, seq); err != nil {
		return "", nil, false, err
	}
	return h.log.Get(ctx, seq)
}

func (h heldSource) Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error {
	return h.log.Follow(ctx, from, func(seq uint64, subject string, data []byte) error {
		if err := h.wait(ctx, seq); err != nil {
			return err
		}
		return fn(seq, subject, data)
	})
}

// copiedUntilResolve copies run's commits from h's log to a new server's,
// up to its first resolve commit: the log as a host that stopped there
// (its call cleared to run, no result) left it. It returns the server, its
// log and the last sequence copied.
func copiedUntilResolve(t *testing.T, h *commands.Host, run string) (*steptest.Server, *step.Log, uint64) {
	t.Helper()
	ctx := ctxT(t)
	stored, err := h.Log.ReadRun(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	s2 := steptest.Start(t, "")
	log2, err := step.Open(ctx, s2.JS, step.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for _, st := range stored {
		if last, err = log2.Commit(ctx, st.Commit, last); err != nil {
			t.Fatal(err)
		}
		if st.Commit.Kind == events.KindResolve {
			break
		}
	}
	return s2, log2, last
}
