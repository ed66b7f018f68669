package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/executortest"
)

// twoTurns is a model that writes with count_fx (which asks) and echo in
// one turn, then answers.
func twoTurns() *scripted {
	return &scripted{turns: func(n int, _ model.Conversation) (model.Turn, error) {
		if n == 1 {
			return calls(1, "Writing.", [2]string{"count_fx", `{"text":"write"}`}, [2]string{"echo", `{"text":"run"}`}), nil
		}
		return answer(2, "Finished."), nil
	}}
}

// A loop stopped at any point of a turn (the process gone: its context
// ended there) is resumed from the log: a turn already recorded is never
// sent again (only a response that was never recorded is asked for
// again), the step is submitted once, the call that asks is waited on and
// runs once when approved, and the run completes.
func TestResumeAfterAStopAtEachPoint(t *testing.T) {
	for _, point := range []string{"before-request", "after-response", "after-turn", "after-step"} {
		t.Run(point, func(t *testing.T) {
			var cnt executortest.Counts
			h := host(t, &cnt)
			api := commands.Wire{Host: h}
			m := twoTurns()
			ctx, stop := context.WithCancel(ctxT(t))
			stopped := false
			cfg := agent.Config{API: api, Provider: m, Out: &answering{ctx: ctxT(t), h: h}, Pause: func(_ context.Context, p string) {
				if p == point && !stopped {
					stopped = true
					stop()
				}
			}}
			req := settings("write and run")
			req.Location = t.TempDir()
			_, err := agent.Start(ctx, cfg, req)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("stopped at %s: %v, want the context's end", point, err)
			}
			runs, err := api.Runs(ctxT(t))
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %v, %v", runs, err)
			}
			cfg.Pause = nil
			res, err := agent.Resume(ctxT(t), cfg, runs[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cause != events.CauseCompleted || res.Text != "Finished." {
				t.Errorf("resumed: %+v, want completed with the answer", res)
			}
			// "Once": each recorded turn was sent once; a response that was
			// never recorded (stopped after-response) was lost with the
			// process, and its request is the one sent again.
			want := 2
			if point == "after-response" {
				want = 3
			}
			if got := len(m.requests()); got != want {
				t.Errorf("%d model requests, want %d", got, want)
			}
			if got := cnt.SideEffecting.Load(); got != 1 {
				t.Errorf("count_fx ran %d times, want once", got)
			}
			r, err := api.Show(ctxT(t), client.ShowRequest{Run: res.Run})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Turns) != 2 || len(r.Steps) != 1 {
				t.Errorf("%d turns and %d steps recorded, want 2 and 1", len(r.Turns), len(r.Steps))
			}
		})
	}
}

// With OnAskExit the loop stops at the ticket (exit code 3) and the run
// stays open; a human approves it; a resume waits for nothing, gives both
// results to the model and finishes; and a rejection's feedback is the
// rejected call's result, as an error, beside the other call's result.
func TestOnAskExitThenApproveOrRejectAndResume(t *testing.T) {
	for _, reject := range []bool{false, true} {
		var cnt executortest.Counts
		h := host(t, &cnt)
		api := commands.Wire{Host: h}
		m := twoTurns()
		cfg := agent.Config{API: api, Provider: m, Out: &quiet{}, OnAsk: agent.OnAskExit}
		req := settings("write and run")
		req.Location = t.TempDir()
		_, err := agent.Start(ctxT(t), cfg, req)
		var aw *agent.AwaitingError
		if !errors.As(err, &aw) || aw.ExitCode() != 3 || len(aw.Tickets) != 1 || aw.Tickets[0].Tool != "count_fx" {
			t.Fatalf("err %v, want an AwaitingError with count_fx's ticket", err)
		}
		reply := commands.ReplyRequest{Ticket: aw.Tickets[0].ID, Reply: "once", Principal: "ops"}
		if reject {
			reply = commands.ReplyRequest{Ticket: aw.Tickets[0].ID, Reply: "reject", Message: "write it elsewhere", Principal: "ops"}
		}
		if _, err := h.Reply(ctxT(t), reply); err != nil {
			t.Fatal(err)
		}
		res, err := agent.Resume(ctxT(t), cfg, aw.Run)
		if err != nil || res.Cause != events.CauseCompleted {
			t.Fatalf("resume: %+v, %v", res, err)
		}
		sent := m.requests()
		if len(sent) != 2 {
			t.Fatalf("%d requests, want 2", len(sent))
		}
		got := sent[1].Conversation.Exchanges[0].Results
		if len(got) != 2 || got[1].Content != "run" || got[1].IsError {
			t.Errorf("results %+v: want echo's beside count_fx's", got)
		}
		switch {
		case reject && (!got[0].IsError || !strings.Contains(got[0].Content, "write it elsewhere")):
			t.Errorf("rejected call's result %+v, want an error with the feedback", got[0])
		case !reject && (got[0].IsError || got[0].Content != "write"):
			t.Errorf("approved call's result %+v", got[0])
		}
		if want := map[bool]int64{false: 1, true: 0}[reject]; cnt.SideEffecting.Load() != want {
			t.Errorf("count_fx ran %d times, want %d", cnt.SideEffecting.Load(), want)
		}
	}
}

// landedAlone is an engine that dies between a turn's commit and its
// step's: a step that brings its turn gets the turn recorded, and then
// the process is gone (stop ends the loop's context).
type landedAlone struct {
	client.API
	stop func()
}

func (a landedAlone) SubmitStep(ctx context.Context, req client.SubmitStepRequest) (*client.StepOutcome, error) {
	if req.Turn == nil {
		return a.API.SubmitStep(ctx, req)
	}
	if _, err := a.API.RecordTurn(ctx, client.RecordTurnRequest{Run: req.Run, Turn: *req.Turn}); err != nil {
		return nil, err
	}
	a.stop()
	return nil, ctx.Err()
}

// A run whose turn is in the log and whose step is not (the engine gone
// between the two commits) is resumed from the log: the turn is not sent
// to the model again, its step is submitted once, and the run completes.
func TestResumeAfterTheTurnLandedWithoutItsStep(t *testing.T) {
	var cnt executortest.Counts
	h := host(t, &cnt)
	api := commands.Wire{Host: h}
	m := twoTurns()
	ctx, stop := context.WithCancel(ctxT(t))
	out := &answering{ctx: ctxT(t), h: h}
	req := settings("write and run")
	req.Location = t.TempDir()
	if _, err := agent.Start(ctx, agent.Config{API: landedAlone{API: api, stop: stop}, Provider: m, Out: out}, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("the engine gone after the turn: %v, want the context's end", err)
	}
	runs, err := api.Runs(ctxT(t))
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	r, err := api.Show(ctxT(t), client.ShowRequest{Run: runs[0].ID})
	if err != nil || len(r.Turns) != 1 || len(r.Steps) != 0 {
		t.Fatalf("before the resume: %d turns and %d steps (%v), want 1 and 0", len(r.Turns), len(r.Steps), err)
	}
	res, err := agent.Resume(ctxT(t), agent.Config{API: api, Provider: m, Out: out}, runs[0].ID)
	if err != nil || res.Cause != events.CauseCompleted || res.Text != "Finished." {
		t.Fatalf("resumed: %+v, %v; want completed with the answer", res, err)
	}
	if got := len(m.requests()); got != 2 {
		t.Errorf("%d model requests, want 2: the recorded turn is not sent again", got)
	}
	if got := cnt.SideEffecting.Load(); got != 1 {
		t.Errorf("count_fx ran %d times, want once", got)
	}
}
