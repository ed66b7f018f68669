package mcpgw

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// A result's text, image and audio parts, another medium as an embedded
// blob, structured output and isError map to MCP's.
func TestResultMapping(t *testing.T) {
	res := result(sgclient.CallResult{CallID: "call-3", Content: "caption", IsError: true, Output: json.RawMessage(`{"n":1}`), Parts: []sgclient.ResultPart{
		{Type: "media", MIME: "image/png", Data: []byte("png")},
		{Type: "media", MIME: "audio/wav", Data: []byte("wav")},
		{Type: "media", MIME: "application/pdf", Data: []byte("pdf")},
	}})
	if !res.IsError || len(res.Content) != 4 {
		t.Fatalf("result: %+v", res)
	}
	if c, ok := res.Content[0].(*mcp.TextContent); !ok || c.Text != "caption" {
		t.Errorf("content 0: %#v", res.Content[0])
	}
	if c, ok := res.Content[1].(*mcp.ImageContent); !ok || c.MIMEType != "image/png" || string(c.Data) != "png" {
		t.Errorf("content 1: %#v", res.Content[1])
	}
	if c, ok := res.Content[2].(*mcp.AudioContent); !ok || c.MIMEType != "audio/wav" || string(c.Data) != "wav" {
		t.Errorf("content 2: %#v", res.Content[2])
	}
	if c, ok := res.Content[3].(*mcp.EmbeddedResource); !ok || c.Resource.MIMEType != "application/pdf" || string(c.Resource.Blob) != "pdf" || !strings.HasPrefix(c.Resource.URI, "stepgate:result/call-3/") {
		t.Errorf("content 3: %#v", res.Content[3])
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"n":1}` {
		t.Errorf("structured: %s", b)
	}
	if empty := result(sgclient.CallResult{}); len(empty.Content) != 1 || empty.IsError {
		t.Errorf("an empty result: %+v, want one empty text", empty)
	}
}

// The run id is a function of the session's name, location, agent, project
// and generation: the same for the same, another for any other.
func TestRunID(t *testing.T) {
	a := RunID("default", "/w", "build", "", 0)
	if a != RunID("default", "/w", "build", "", 0) || !events.ValidID(a) {
		t.Fatalf("RunID not stable: %s", a)
	}
	for _, b := range []string{RunID("other", "/w", "build", "", 0), RunID("default", "/x", "build", "", 0),
		RunID("default", "/w", "explore", "", 0), RunID("default", "/w", "build", "p", 0), RunID("default", "/w", "build", "", 1)} {
		if b == a {
			t.Errorf("RunID collides: %s", b)
		}
	}
}

// A client's name is its own to choose: the principal keeps it to one
// printable line of at most 64 bytes, marked as a client's.
func TestPrincipalOf(t *testing.T) {
	for name, want := range map[string]string{
		"claude-code":           "mcp-client:claude-code",
		"":                      "mcp-client:unnamed",
		"a\nb\x00c\x1b[31m":     "mcp-client:a_b_c_[31m",
		strings.Repeat("é", 40): "mcp-client:" + strings.Repeat("é", 32) + "…",
		"bad\xffutf8":           "mcp-client:bad_utf8",
	} {
		if got := principalOf(name); got != want {
			t.Errorf("principalOf(%q) = %q, want %q", name, got, want)
		}
	}
}
