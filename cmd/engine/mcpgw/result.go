package mcpgw

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
)

// metaTicket is the result _meta key that names a pending call's ticket.
const metaTicket = "stepgate/ticket"

// result maps one call's result to MCP: its text, media parts as image or
// audio content (other media as an embedded blob), structured output as
// structuredContent, and a tool error, a blocked or refused call as
// isError.
func result(r sgclient.CallResult) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: r.IsError}
	if r.Content != "" || len(r.Parts) == 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: r.Content})
	}
	for i, p := range r.Parts {
		switch {
		case strings.HasPrefix(p.MIME, "image/"):
			res.Content = append(res.Content, &mcp.ImageContent{Data: p.Data, MIMEType: p.MIME})
		case strings.HasPrefix(p.MIME, "audio/"):
			res.Content = append(res.Content, &mcp.AudioContent{Data: p.Data, MIMEType: p.MIME})
		default:
			res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: fmt.Sprintf("stepgate:result/%s/%d", r.CallID, i), MIMEType: p.MIME, Blob: p.Data}})
		}
	}
	if len(r.Output) > 0 {
		res.StructuredContent = r.Output
	}
	return res
}

// errorResult is a result the model sees as a tool error.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// pendingResult tells the model its call did not run yet: it waits for a
// human, on the ticket named (also in _meta "stepgate/ticket").
func pendingResult(o *open) *mcp.CallToolResult {
	res := errorResult(fmt.Sprintf("Not run yet: this call waits for a human's approval%s. "+
		"Call %s again with the same arguments to wait for the answer (and get the result once approved); "+
		"any other call is refused until this one is answered.", ticketsText(o.tickets), o.call.Tool))
	if len(o.tickets) > 0 {
		res.Meta = mcp.Meta{metaTicket: o.tickets[0].ID}
	}
	return res
}

// ticketsText names the tickets a call waits on and how to answer them.
func ticketsText(ts []sgclient.TicketView) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, " (ticket %s", t.ID)
		if t.Reason != "" {
			fmt.Fprintf(&b, ": %s", t.Reason)
		}
		fmt.Fprintf(&b, "; answer it with `engine approve %s` or `engine reject %s -m WHY`)", t.ID, t.ID)
	}
	return b.String()
}
