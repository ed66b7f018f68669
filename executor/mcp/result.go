package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/executor"
)

// MapResult turns an MCP tool result into the executor's, part by part in
// the server's order:
//   - text → a text part;
//   - image and audio → a media part (MIME type and bytes);
//   - an embedded resource with text → a text part, "[resource <uri>]" on
//     its first line and the text after it; with a blob whose MIME type is
//     image/* or audio/* → a media part; any other blob → a text part
//     naming it ("[resource <uri> (<mime>, <n> bytes) not shown]");
//   - a resource link → a text part "[resource link <name>: <uri>]", its
//     MIME type and description appended when given;
//   - anything else → a text part naming its kind.
//
// structuredContent becomes Result.Structured (as JSON), isError an error
// result. The output store bounds the result later, like any tool's.
func MapResult(r *sdk.CallToolResult) (executor.Result, error) {
	if r == nil {
		return executor.Result{}, fmt.Errorf("%w: the server returned no result", ErrUnavailable)
	}
	res := executor.Result{IsError: r.IsError}
	for _, c := range r.Content {
		res.Parts = append(res.Parts, mapContent(c))
	}
	if r.StructuredContent != nil {
		b, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return executor.Result{}, fmt.Errorf("structured content: %w", err)
		}
		res.Structured = b
	}
	return res, nil
}

func text(s string) executor.Part { return executor.Part{Type: executor.PartText, Text: s} }

func media(mime string, data []byte) executor.Part {
	if mime == "" {
		mime = "application/octet-stream"
	}
	return executor.Part{Type: executor.PartMedia, MIME: mime, Data: data}
}

func mapContent(c sdk.Content) executor.Part {
	switch c := c.(type) {
	case *sdk.TextContent:
		return text(c.Text)
	case *sdk.ImageContent:
		return media(c.MIMEType, c.Data)
	case *sdk.AudioContent:
		return media(c.MIMEType, c.Data)
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return text("[resource without contents]")
		}
		switch {
		case r.Blob == nil:
			return text(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
		case strings.HasPrefix(r.MIMEType, "image/") || strings.HasPrefix(r.MIMEType, "audio/"):
			return media(r.MIMEType, r.Blob)
		}
		mime := r.MIMEType
		if mime == "" {
			mime = "application/octet-stream"
		}
		return text(fmt.Sprintf("[resource %s (%s, %d bytes) not shown]", r.URI, mime, len(r.Blob)))
	case *sdk.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link %s: %s", c.Name, c.URI)
		if c.MIMEType != "" {
			fmt.Fprintf(&b, " (%s)", c.MIMEType)
		}
		b.WriteString("]")
		if c.Description != "" {
			b.WriteString(" " + c.Description)
		}
		return text(b.String())
	case nil:
		return text("[empty content]")
	}
	return text(fmt.Sprintf("[content of type %T not shown]", c))
}
