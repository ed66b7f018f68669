package fakeprovider

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/agent/model"
)

// withIDs fills in what a script left out: the response id, the call ids
// in each API's own form ("call_…" for OpenAI, "toolu_…" for Anthropic)
// and a usage that grows with the conversation.
func withIDs(t model.Turn, api string, n int) model.Turn {
	t.Calls = append([]model.ToolCall(nil), t.Calls...)
	prefix, idPrefix := "call_", "chatcmpl-fake"
	switch api {
	case Responses:
		idPrefix = "resp_fake"
	case Messages:
		prefix, idPrefix = "toolu_", "msg_fake"
	}
	if t.ID == "" {
		t.ID = fmt.Sprintf("%s%06d", idPrefix, n)
	}
	for i := range t.Calls {
		if t.Calls[i].ID == "" {
			t.Calls[i].ID = fmt.Sprintf("%sfake%06d_%d", prefix, n, i)
		}
		if len(t.Calls[i].Args) == 0 {
			t.Calls[i].Args = json.RawMessage(`{}`)
		}
	}
	if t.Usage == (model.Usage{}) {
		out := int64(len(t.Text)/4 + 1)
		for _, c := range t.Calls {
			out += int64(len(c.Args)/4 + 5)
		}
		t.Usage = model.Usage{InputTokens: int64(10 * n), OutputTokens: out}
	}
	return t
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// contentText reads a content field that is either a string or an array
// of {"type": "text"|"input_text"|"output_text", "text": …} parts.
func contentText(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), true
}

// badRequest is a 400 fault with msg.
func badRequest(msg string) *Fault {
	return &Fault{Status: 400, Message: msg}
}
