package mcpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// elicitSchema is the form the client's user answers a ticket with.
var elicitSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","title":"Decision","enum":["approve","reject"],"description":"approve runs this call once; reject tells the model it was refused"},` +
	`"feedback":{"type":"string","title":"Feedback","description":"when rejecting: what the model is told"}},` +
	`"required":["decision"]}`)

// rejectedText is a rejection's message when the user gave none (a reject
// without a message would end the whole run).
const rejectedText = "rejected by the MCP client's user"

// canElicit reports whether the client declared the elicitation capability
// (form mode).
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// Principal is who a reply given through elicitation is recorded as: the
// MCP client's self-declared name (at most 64 bytes, control characters
// replaced), marked as such. It names a client, it proves nothing.
func Principal(ss *mcp.ServerSession) string {
	name := ""
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		name = p.ClientInfo.Name
	}
	return principalOf(name)
}

// principalOf is Principal of a client that calls itself name.
func principalOf(name string) string {
	if name == "" {
		name = "unnamed"
	}
	name = strings.Map(func(r rune) rune { // the client's to choose: kept to one printable line
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return '_'
		}
		return r
	}, clip(name, 64))
	return "mcp-client:" + name
}

// elicitKey is the id of the input request that offers ticket id.
func elicitKey(id string) string { return "stepgate-ticket-" + id }

// offer asks the client to put ticket t to its user: an input-required
// result (multi round-trip, SEP-2322) holding one form elicitation. A
// client on a protocol before it is asked directly by the SDK, which then
// calls the tool again with the answer; a newer client calls the tool
// again itself, with the answer in inputResponses.
func offer(t sgclient.TicketView) *mcp.CallToolResult {
	msg := fmt.Sprintf("Stepgate: the agent asks to run %s with %s.\n%s\nTicket %s. Approve it once, or reject it?",
		t.Tool, clip(string(t.Args), 2000), t.Reason, t.ID)
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{elicitKey(t.ID): &mcp.ElicitParams{Message: msg, RequestedSchema: elicitSchema}},
		RequestState: t.ID}
}

// answered replies to ticket t with the user's answer to its offer, if
// the call carries one, through the same reply command every host's
// approve uses. It reports whether the call carried an answer (accepted or
// not): the offer is not made again within this call. The answer is the
// client's to give: it is checked against the form (a decision of approve
// or reject), not trusted further; the reply is recorded with a principal
// naming the MCP client.
func (g *Gateway) answered(ctx context.Context, req *mcp.CallToolRequest, t sgclient.TicketView) bool {
	r, ok := req.Params.InputResponses[elicitKey(t.ID)]
	if !ok {
		return false
	}
	res, ok := r.(*mcp.ElicitResult)
	if !ok || res.Action != "accept" {
		return true
	}
	decision, _ := res.Content["decision"].(string)
	reply := sgclient.ReplyRequest{Ticket: t.ID, Run: g.run, Principal: Principal(req.Session)}
	switch decision {
	case "approve":
		reply.Reply = events.ReplyOnce
	case "reject":
		reply.Reply = events.ReplyReject
		reply.Message, _ = res.Content["feedback"].(string)
		if strings.TrimSpace(reply.Message) == "" {
			reply.Message = rejectedText // without a message a reject would end the whole run
		}
	default:
		g.log.Warn("elicitation answer without a decision; the ticket waits", "ticket", t.ID)
		return true
	}
	if _, err := g.api.Reply(ctx, reply); err != nil && !errors.Is(err, sgclient.ErrTicketResolved) {
		g.log.Warn("reply through elicitation", "ticket", t.ID, "err", err)
	}
	return true
}

// clip cuts s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
