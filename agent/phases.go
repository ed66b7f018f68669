package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// errMovedOn means the run is not where this loop held it (another process
// recorded the turn or submitted the step, a human's reject ended it):
// read it from the log again and go on from there.
var errMovedOn = errors.New("the run moved on elsewhere")

// providerError is a provider's refusal that ends the run failed.
type providerError struct {
	msg string
	err error
}

func (e *providerError) Error() string { return e.msg }
func (e *providerError) Unwrap() error { return e.err }

// movedOn reports whether err says the run is not where the loop held it.
func movedOn(err error) bool {
	return errors.Is(err, client.ErrConflict) || errors.Is(err, client.ErrStepOrder) || errors.Is(err, client.ErrRunNotActive)
}

// last is the conversation's last exchange.
func (l *loop) last() *model.Exchange {
	ex := l.st.Conversation.Exchanges
	return &ex[len(ex)-1]
}

// turn asks the model for the next turn and records it: the turn is in the
// log before any of its calls is decided. A turn of calls is recorded by
// its step's request (the engine commits it first, see
// client.SubmitStepRequest.Turn); the model's answer, a turn without
// calls, is recorded here.
func (l *loop) turn(ctx context.Context) error {
	if err := l.cfg.pause(ctx, "before-request"); err != nil {
		return err
	}
	cat, err := l.cfg.API.Materialize(ctx, client.MaterializeRequest{Run: l.run})
	if err != nil {
		if movedOn(err) {
			return errMovedOn
		}
		return fmt.Errorf("run %s: materialize: %w", l.run, err)
	}
	req := model.Request{Model: l.model, Tools: tools(*cat), Conversation: l.st.Conversation, MaxTokens: l.maxToks, Stream: l.cfg.Stream, OnText: l.cfg.Out.Text}
	n := l.st.Turns + 1
	t, err := l.next(ctx, req, n)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &providerError{msg: l.redact(err.Error()), err: err}
	}
	t = withIDs(n, t)
	if err := l.cfg.pause(ctx, "after-response"); err != nil {
		return err // the response is lost with the process: its request is sent again on resume
	}
	ev := turnEvent(n, t)
	if len(t.Calls) > 0 {
		l.fresh = &ev
	} else if _, err := l.cfg.API.RecordTurn(ctx, client.RecordTurnRequest{Run: l.run, Turn: ev}); err != nil {
		if movedOn(err) {
			return errMovedOn
		}
		return fmt.Errorf("run %s: record turn %d: %w", l.run, n, err)
	}
	l.st.Conversation.Exchanges = append(l.st.Conversation.Exchanges, model.Exchange{Turn: t})
	l.st.Turns = n
	l.cfg.Out.Turn(l.run, n, t)
	if len(t.Calls) > 0 {
		l.st.Phase = NeedSubmit
		return nil
	}
	l.st.Phase = Finished
	return l.cfg.pause(ctx, "after-turn")
}

// submit submits the last turn's calls as the step of its number.
func (l *loop) submit(ctx context.Context) error {
	n, t := l.st.Turns, l.last().Turn
	out, err := l.cfg.API.SubmitStep(ctx, client.SubmitStepRequest{Run: l.run, Step: n, Calls: stepCalls(t), Turn: l.fresh})
	if err != nil {
		if movedOn(err) {
			return errMovedOn
		}
		return fmt.Errorf("run %s: step %d: %w", l.run, n, err)
	}
	l.st.Steps, l.fresh = n, nil
	if !out.Final {
		l.waiting = ticketsOf(out)
		l.st.Phase = NeedResults
		return nil
	}
	return l.results(ctx, t, out)
}

// results gives a final step's results to the conversation.
func (l *loop) results(ctx context.Context, t model.Turn, out *client.StepOutcome) error {
	res, err := outcomeResults(t, out)
	if err != nil {
		return err
	}
	l.last().Results = res
	l.cfg.Out.Step(out)
	l.st.Phase = NeedTurn
	return l.cfg.pause(ctx, "after-step")
}

// await waits for the last step's tickets to be answered, or stops at
// them (OnAskExit).
func (l *loop) await(ctx context.Context) error {
	n := l.st.Steps
	l.cfg.Out.Waiting(l.run, n, l.waiting)
	if l.cfg.OnAsk == OnAskExit {
		return &AwaitingError{Run: l.run, Step: n, Tickets: l.waiting}
	}
	for {
		out, err := l.cfg.API.AwaitStep(ctx, client.AwaitRequest{Run: l.run, Step: n})
		switch {
		case errors.Is(err, client.ErrAwaitTimeout) && ctx.Err() == nil:
			continue
		case movedOn(err):
			return errMovedOn
		case err != nil:
			return fmt.Errorf("run %s: await step %d: %w", l.run, n, err)
		}
		return l.results(ctx, l.last().Turn, out)
	}
}

// end ends the run with cause (the model's answer: completed) and returns
// how the loop ended; cause is the error to return with it.
func (l *loop) end(ctx context.Context, endCause, reason string, cause error) (*Result, error) {
	res := l.result(endCause, reason)
	why := reason
	if why == "" {
		why = truncate(res.Text, 2000)
	}
	_, err := l.cfg.API.EndRun(ctx, client.EndRunRequest{Run: l.run, Cause: endCause, Reason: why})
	if errors.Is(err, client.ErrRunNotActive) { // ended meanwhile (elsewhere)
		return l.ended(ctx)
	}
	if err != nil {
		return nil, errors.Join(cause, fmt.Errorf("run %s: end: %w", l.run, err))
	}
	l.cfg.Out.Ended(res)
	return res, cause
}

// ended is the result of a run that has ended, as its log says.
func (l *loop) ended(ctx context.Context) (*Result, error) {
	r, err := l.cfg.API.Show(ctx, client.ShowRequest{Run: l.run})
	if err != nil {
		return nil, err
	}
	res := l.result("", "")
	if r.End != nil {
		res.Cause, res.Reason = r.End.Cause, r.End.Reason
		if res.Cause == events.CauseCompleted && res.Reason == truncate(res.Text, 2000) {
			res.Reason = ""
		}
	}
	l.cfg.Out.Ended(res)
	return res, nil
}

// result is the loop's result with the conversation as it stands.
func (l *loop) result(cause, reason string) *Result {
	res := &Result{Run: l.run, Cause: cause, Reason: reason, Turns: l.st.Turns, Steps: l.st.Steps, Usage: usageOf(l.st.Conversation)}
	if ex := l.st.Conversation.Exchanges; len(ex) > 0 {
		res.Text = ex[len(ex)-1].Turn.Text
	}
	return res
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
