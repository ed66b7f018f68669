package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
)

// endedText is the result of every call once the session's run has ended.
const endedText = "Not run: this session's run has ended (a human declined it). No further calls run here; " +
	"the MCP server's next start begins a new run."

// callTool is every tool's handler: one step with one call. Calls run one
// at a time, in the order they take the slot; a repeat of the call whose
// step waits for a ticket joins that step instead (see [Gateway.take]).
// After the step the catalogue is materialized again: when it changed, the
// clients are told the tool list changed.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	call := sgclient.CallRequest{Tool: req.Params.Name, Args: normalArgs(req.Params.Arguments)}
	joined, err := g.take(ctx, call)
	if err != nil {
		return nil, err
	}
	var res *mcp.CallToolResult
	if joined != nil {
		res, err = g.wait(ctx, req, joined)
	} else {
		res, err = g.call(ctx, req, call)
		g.release()
	}
	if _, ended := g.state(); err == nil && !ended {
		g.refreshTools(ctx)
	}
	return res, err
}

// call is callTool's step, with the slot held.
func (g *Gateway) call(ctx context.Context, req *mcp.CallToolRequest, call sgclient.CallRequest) (*mcp.CallToolResult, error) {
	o, ended := g.state()
	if ended {
		return errorResult(endedText), nil
	}
	if o != nil {
		return g.attach(ctx, req, o, call)
	}
	return g.submit(ctx, req, call, true)
}

// submit submits call as the run's next step, and waits for it when it
// asks. again allows one resync when the engine says the run is elsewhere
// than this gateway thought (another process of the session moved it).
func (g *Gateway) submit(ctx context.Context, req *mcp.CallToolRequest, call sgclient.CallRequest, again bool) (*mcp.CallToolResult, error) {
	g.mu.Lock()
	step := g.next
	g.mu.Unlock()
	call.ID = "call-" + strconv.Itoa(step)
	out, err := g.api.SubmitStep(ctx, sgclient.SubmitStepRequest{Run: g.run, Step: step, Calls: []sgclient.CallRequest{call}})
	switch {
	case errors.Is(err, sgclient.ErrRunNotActive):
		g.settled(nil, true)
		return errorResult(endedText), nil
	case again && (errors.Is(err, sgclient.ErrStepOrder) || errors.Is(err, sgclient.ErrConflict)):
		if rerr := g.resync(ctx); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		o, ended := g.state()
		if ended {
			return errorResult(endedText), nil
		}
		if o != nil {
			return g.attach(ctx, req, o, call)
		}
		return g.submit(ctx, req, call, false)
	case err != nil:
		return nil, fmt.Errorf("stepgate: submit %s as step %d of run %s: %w", call.Tool, step, g.run, err)
	case len(out.Results) != 1 && out.Final:
		return nil, fmt.Errorf("stepgate: step %d of run %s answered %d results for one call", step, g.run, len(out.Results))
	}
	if out.Final {
		g.mu.Lock()
		g.next = step + 1
		g.mu.Unlock()
		return result(out.Results[0]), nil
	}
	o := &open{step: step, call: call, tickets: g.views(ctx, out.Tickets, call.Args)}
	g.mu.Lock()
	g.next = step + 1
	g.setOpen(o)
	g.mu.Unlock()
	return g.wait(ctx, req, o)
}

// attach is a call made, with the slot held, while the run's step o is not
// final. The same call again (see [open.repeats]) waits for that step's
// ticket; any other call is refused naming it, unless the step has become
// final meanwhile, in which case the new call goes on as the next step.
func (g *Gateway) attach(ctx context.Context, req *mcp.CallToolRequest, o *open, call sgclient.CallRequest) (*mcp.CallToolResult, error) {
	if o.repeats(call) {
		return g.wait(ctx, req, o)
	}
	out, err := g.api.AwaitStep(ctx, sgclient.AwaitRequest{Run: g.run, Step: o.step, Timeout: "1ms"})
	switch {
	case err == nil && out.Final:
		g.settled(o, false)
		return g.submit(ctx, req, call, false)
	case errors.Is(err, sgclient.ErrRunNotActive):
		g.settled(o, true)
		return errorResult(endedText), nil
	case err != nil && !errors.Is(err, sgclient.ErrAwaitTimeout):
		return nil, fmt.Errorf("stepgate: step %d of run %s: %w", o.step, g.run, err)
	}
	return errorResult(fmt.Sprintf("Not run: the previous call, %s, waits for a human's approval%s. "+
		"This session's calls run one at a time: answer that ticket first, or call %s again with the same arguments to wait for it.",
		o.call.Tool, ticketsText(o.tickets), o.call.Tool)), nil
}

// views are the pending tickets ts as `engine tickets` shows them (with
// the reason the call asks and its arguments). A step's answer carries
// both, so the gateway asks for nothing its agent role may not (the shipped
// agent role may not ask tickets); only a ticket without them is looked up,
// where the engine still lists it, and args stand in for the arguments
// otherwise.
func (g *Gateway) views(ctx context.Context, ts []sgclient.TicketView, args json.RawMessage) []sgclient.TicketView {
	out := make([]sgclient.TicketView, 0, len(ts))
	for _, t := range ts {
		if t.Reason != "" && len(t.Args) > 0 {
			out = append(out, t)
			continue
		}
		page, err := g.api.Tickets(ctx, sgclient.TicketsRequest{Ticket: t.ID, Run: g.run})
		if err == nil && len(page.Tickets) == 1 {
			t = page.Tickets[0]
		} else if err != nil {
			g.log.Warn("read a ticket", "ticket", t.ID, "err", err)
		}
		if len(t.Args) == 0 {
			t.Args = args
		}
		out = append(out, t)
	}
	return out
}
