package commands_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// Waiters of many steps, several per step, each get their own step's
// outcome once a reply finishes it, in whatever order the replies come;
// a waiter whose ctx ends, or whose timeout passes, is answered so at once
// and the others wait on.
func TestAwaitAnswersEachWaiterWithItsStep(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	const runs, per = 30, 4
	type awaited struct{ run, ticket string }
	steps := make([]awaited, runs)
	for i := range steps {
		run, out := awaiting(t, h, "p", call("a", "count_fx", text{fmt.Sprint("ask ", i)}))
		steps[i] = awaited{run, out.Tickets[0].ID}
	}
	var wg sync.WaitGroup
	errs := make(chan error, runs*per)
	for i, st := range steps {
		for range per {
			wg.Go(func() {
				out, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: st.run, Step: 1})
				switch {
				case err != nil:
					errs <- err
				case out.Run != st.run || !out.Final || len(out.Results) != 1 || out.Results[0].Content != fmt.Sprint("ask ", i):
					errs <- fmt.Errorf("a waiter of run %d got %+v", i, out)
				}
			})
		}
	}
	// One more waiter gives up (its ctx), one times out: neither answers
	// nor disturbs the others.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.AwaitStep(gone, commands.AwaitRequest{Run: steps[0].run, Step: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose ctx ended: %v, want context.Canceled", err)
	}
	if _, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: steps[0].run, Step: 1, Timeout: "50ms"}); !errors.Is(err, commands.ErrAwaitTimeout) {
		t.Errorf("a waiter past its timeout: %v, want ErrAwaitTimeout", err)
	}
	for i := len(steps) - 1; i >= 0; i-- { // the last run's step first
		if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: steps[i].ticket, Reply: events.ReplyOnce, Principal: "ops"}); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("waiters were not answered after every step was final")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// A step that is final already is answered at once.
	if out, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: steps[0].run, Step: 1}); err != nil || !out.Final {
		t.Errorf("await of a final step: %+v, %v", out, err)
	}
}
