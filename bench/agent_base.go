package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// w8Steps is w8's step baseline: runs of w8Turns steps of the same two
// calls as the agent's turns, submitted straight to h (no model, no
// conversation), tasks runs one after the other, in one window.
func w8Steps(ctx context.Context, h *commands.Host, location string, tasks int) (window, error) {
	runs := make([]string, tasks)
	for i := range runs {
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: location})
		if err != nil {
			return window{}, err
		}
		runs[i] = info.Run
	}
	return timed(tasks*w8Turns, func() error {
		for _, run := range runs {
			for n := 1; n <= w8Turns; n++ {
				calls := make([]commands.CallRequest, w8Calls)
				for i := range calls {
					c := w8Call(n-1, i)
					calls[i] = commands.CallRequest{ID: fmt.Sprintf("c%d", i+1), Tool: c.Name, Args: c.Args}
				}
				out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: n, Calls: calls})
				if err != nil {
					return err
				}
				for _, r := range out.Results {
					if r.IsError {
						return fmt.Errorf("w8 step baseline: step %d: %s: %s", n, r.Tool, r.Content)
					}
				}
			}
		}
		return nil
	})
}

// rawTurnCommits is w8's commit baseline: n commits of one model turn, as
// the engine records an agent's turn of two calls (the same text, ids and
// arguments), published one at a time straight to JetStream on a fresh
// stream, each acknowledged before the next, after the workloads' warm-up.
func rawTurnCommits(ctx context.Context, o Options, n int) (window, error) {
	e, err := newRawEnv(ctx, o)
	if err != nil {
		return window{}, err
	}
	defer e.close()
	msgs, err := turnMessages(warmup + n)
	if err != nil {
		return window{}, err
	}
	last, err := publishChain(ctx, e.pub, msgs[:warmup], 0)
	if err != nil {
		return window{}, err
	}
	return timed(n, func() error {
		_, err := publishChain(ctx, e.pub, msgs[warmup:], last)
		return err
	})
}

// turnMessages are n turn commits of one run, turn i of them shaped as
// the agent records turn i of w8's script.
func turnMessages(n int) ([]*nats.Msg, error) {
	ids := events.NewIDSource(nil)
	now := time.Now().UTC()
	run := ids.New(now)
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		turn := events.ModelTurnRecorded{Turn: i + 1, Response: fmt.Sprintf("chatcmpl-fake%06d", i+1), Text: fmt.Sprintf("turn %d", i%w8Turns+1),
			Stop: "tool_calls", Usage: events.ModelUsage{InputTokens: int64(10 * (i + 1)), OutputTokens: 40}}
		for k := range w8Calls {
			c := w8Call(i, k)
			turn.Calls = append(turn.Calls, events.ModelCall{ID: fmt.Sprintf("call_fake%06d_%d", i+1, k), Name: c.Name, Args: string(c.Args)})
		}
		c := &events.Commit{ID: ids.New(now), Run: run, Kind: events.KindTurn, At: now, Host: "bench", Events: []events.Event{turn}}
		m, err := commitMsg(c)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
	}
	return msgs, nil
}

// w8Direct is w8's engine path without the loop: the requests the loop
// sends the engine for a task (start, then per turn materialize and the
// step with its turn; the answer's materialize, its turn and the end), sent
// straight to h with the turns made before the clock, tasks tasks one
// after the other, in one window of tasks×w8Turns turns.
func w8Direct(ctx context.Context, h *commands.Host, location string, tasks int) (window, error) {
	set := events.ModelSettings{Provider: "openai", Model: w8Model, Task: "read notes.txt and list the text files, ten times"}
	turns := make([]events.ModelTurnRecorded, w8Turns+1)
	calls := make([][]commands.CallRequest, w8Turns)
	for t := range turns {
		turns[t] = events.ModelTurnRecorded{Turn: t + 1, Response: fmt.Sprintf("chatcmpl-direct%d", t+1), Text: "done", Stop: "stop"}
		if t == w8Turns {
			break
		}
		turns[t].Text, turns[t].Stop = fmt.Sprintf("turn %d", t+1), "tool_calls"
		for k := range w8Calls {
			c := w8Call(t, k)
			id := fmt.Sprintf("call_direct%d_%d", t+1, k)
			turns[t].Calls = append(turns[t].Calls, events.ModelCall{ID: id, Name: c.Name, Args: string(c.Args)})
			calls[t] = append(calls[t], commands.CallRequest{ID: id, Tool: c.Name, Args: c.Args})
		}
	}
	return timed(tasks*w8Turns, func() error {
		for range tasks {
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: location, Agent: "build", Model: &set})
			if err != nil {
				return err
			}
			for t, turn := range turns {
				if _, err := h.Materialize(ctx, commands.MaterializeRequest{Run: info.Run}); err != nil {
					return err
				}
				if t == w8Turns { // the answer, recorded alone
					if _, err := h.RecordTurn(ctx, commands.RecordTurnRequest{Run: info.Run, Turn: turn}); err != nil {
						return err
					}
					break
				}
				if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: t + 1, Calls: calls[t], Turn: &turn}); err != nil {
					return err
				}
			}
			if _, err := (commands.Wire{Host: h}).EndRun(ctx, commands.EndRunRequest{Run: info.Run, Cause: events.CauseCompleted}); err != nil {
				return err
			}
		}
		return nil
	})
}
