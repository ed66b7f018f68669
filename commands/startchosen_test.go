package commands_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// A start with a client-chosen run id is idempotent: sent again (at once,
// concurrently, and to another host) it answers with the same run and
// commits one start; the id with another request is a conflict, and an id
// that is not a ULID is refused.
func TestStartRunWithChosenIDIsIdempotent(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h1 := startHost(t, s, registry(t, &cnt), "h1")
	h2 := startHost(t, s, registry(t, &cnt), "h2")
	ctx := ctxT(t)
	loc := t.TempDir()
	run := events.NewIDSource(nil).New(time.Now())
	req := commands.StartRunRequest{Location: loc, Run: run, Rules: []gate.Rule{{Action: "bash", Resource: "*", Effect: gate.Deny}}}

	var (
		wg    sync.WaitGroup
		infos [6]*commands.RunInfo
		errs  [6]error
	)
	for i := range infos {
		h := h1
		if i%2 == 1 {
			h = h2
		}
		wg.Go(func() { infos[i], errs[i] = h.StartRun(ctx, req) })
	}
	wg.Wait()
	for i := range infos {
		if errs[i] != nil {
			t.Fatalf("attempt %d: %v", i, errs[i])
		}
		if infos[i].Run != run {
			t.Fatalf("attempt %d started run %s, want the chosen %s", i, infos[i].Run, run)
		}
		if diff := cmp.Diff(infos[0].Catalog, infos[i].Catalog); diff != "" {
			t.Errorf("attempt %d's catalogue (-first +this):\n%s", i, diff)
		}
	}
	tail, err := h1.Log.ReadRun(ctx, run, 0)
	if err != nil {
		t.Fatal(err)
	}
	starts := 0
	for _, c := range tail {
		if c.Commit.Kind == events.KindStart {
			starts++
		}
	}
	if starts != 1 {
		t.Errorf("%d start commits for one run, want 1", starts)
	}
	if _, err := h1.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{"x"})}}); err != nil {
		t.Fatalf("a step of the started run: %v", err)
	}

	other := req
	other.Location = t.TempDir()
	if _, err := h2.StartRun(ctx, other); !errors.Is(err, commands.ErrConflict) {
		t.Errorf("the run id with another location = %v, want conflict", err)
	}
	other = req
	other.Rules = nil
	if _, err := h1.StartRun(ctx, other); !errors.Is(err, commands.ErrConflict) {
		t.Errorf("the run id with other overrides = %v, want conflict", err)
	}
	other = req
	other.Run = "not-a-ulid"
	if _, err := h1.StartRun(ctx, other); !errors.Is(err, commands.ErrInvalidRequest) {
		t.Errorf("a run id that is no ULID = %v, want invalid request", err)
	}
}
