package mcpgw

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
)

// wait waits for step o to be final, up to the configured wait,
// with progress notifications meanwhile (when the client gave a progress
// token). When elicitation is enabled and the client declared it, the
// ticket is first offered to the client's user: an input-required result
// (multi round-trip); the call comes back with the answer, which is
// replied, and then waited on. The final step's result, or a result naming
// the ticket when the wait ends first. Any number of calls may wait on one
// step at once (the call that submitted it, with the slot held, and its
// repeats, without it): each reads the step's result from the engine, so
// each gets the same result; the first to see it final ends the step's
// openness (see [Gateway.settled]).
func (g *Gateway) wait(ctx context.Context, req *mcp.CallToolRequest, o *open) (*mcp.CallToolResult, error) {
	wctx, cancel := context.WithTimeout(ctx, g.cfg.Wait)
	defer cancel()
	if g.cfg.Elicit && len(o.tickets) == 1 && canElicit(req.Session) && !g.answered(wctx, req, o.tickets[0]) {
		return offer(o.tickets[0]), nil
	}
	token := req.Params.GetProgressToken()
	start := time.Now()
	for n := 1; ; n++ {
		left := time.Until(deadlineOf(wctx))
		if left <= 0 {
			break
		}
		out, err := g.api.AwaitStep(wctx, sgclient.AwaitRequest{Run: g.run, Step: o.step, Timeout: min(left, g.cfg.ProgressEvery, maxAwait).String()})
		switch {
		case err == nil && out.Final:
			g.settled(o, false)
			if len(out.Results) != 1 {
				return nil, fmt.Errorf("stepgate: step %d of run %s answered %d results for one call", o.step, g.run, len(out.Results))
			}
			return result(out.Results[0]), nil
		case errors.Is(err, sgclient.ErrRunNotActive):
			g.settled(o, true)
			return errorResult(endedText), nil
		case ctx.Err() != nil:
			return nil, ctx.Err() // the client cancelled the call; the ticket stays
		case err != nil && wctx.Err() == nil && !errors.Is(err, sgclient.ErrAwaitTimeout):
			return nil, fmt.Errorf("stepgate: await step %d of run %s: %w", o.step, g.run, err)
		}
		if token != nil {
			msg := fmt.Sprintf("waiting %s for a human's approval%s", time.Since(start).Round(time.Second), ticketsText(o.tickets))
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg}); err != nil {
				g.log.Warn("progress notification", "err", err)
			}
		}
	}
	return pendingResult(o), nil
}

// maxAwait is the longest one await_step request may wait (the engine's
// bound).
const maxAwait = time.Hour

// deadlineOf is ctx's deadline (wait always sets one).
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}
