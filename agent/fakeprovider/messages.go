package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/stepgate/stepgate/agent/model"
)

// messagesBody is an Anthropic Messages request, as far as the fake reads
// it.
type messagesBody struct {
	Model     string          `json:"model"`
	MaxTokens *int64          `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// block is one content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// blocks reads a message's content: a string (one text block) or blocks.
func blocks(raw json.RawMessage) ([]block, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []block{{Type: "text", Text: s}}, true
	}
	var bs []block
	if json.Unmarshal(raw, &bs) != nil {
		return nil, false
	}
	return bs, true
}

// ParseMessages reads a Messages request body into a Request, or the 400
// the real API answers — among them, as the API does, a tool_use without
// a tool_result in the very next user message:
// "messages.N: `tool_use` ids were found without `tool_result` blocks
// immediately after: …".
func ParseMessages(body []byte) (Request, *Fault) {
	var b messagesBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Request{}, badRequest("There was an issue with your request body: invalid JSON")
	}
	req := Request{API: Messages, Model: b.Model, Stream: b.Stream}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	if b.MaxTokens == nil {
		return req, badRequest("max_tokens: Field required")
	}
	if len(b.System) > 0 {
		sys, ok := contentText(b.System)
		if !ok {
			return req, badRequest("system: Input should be a valid list")
		}
		req.Conversation.System = sys
	}
	msgs := b.Messages
	if len(msgs) == 0 || msgs[0].Role != "user" {
		return req, badRequest("messages: the first message must use the \"user\" role")
	}
	first, ok := blocks(msgs[0].Content)
	if !ok {
		return req, badRequest("messages.0.content: Input should be a valid list")
	}
	var task strings.Builder
	for _, bl := range first {
		task.WriteString(bl.Text)
	}
	req.Conversation.Task = task.String()
	for i := 1; i < len(msgs); i += 2 {
		if msgs[i].Role != "assistant" {
			return req, badRequest(fmt.Sprintf("messages.%d: roles must alternate between \"user\" and \"assistant\"", i))
		}
		bs, ok := blocks(msgs[i].Content)
		if !ok {
			return req, badRequest(fmt.Sprintf("messages.%d.content: Input should be a valid list", i))
		}
		ex := model.Exchange{}
		names := map[string]string{}
		for _, bl := range bs {
			switch bl.Type {
			case "text":
				ex.Turn.Text += bl.Text
			case "tool_use":
				ex.Turn.Calls = append(ex.Turn.Calls, model.ToolCall{ID: bl.ID, Name: bl.Name, Args: bl.Input})
				names[bl.ID] = bl.Name
			}
		}
		if i+1 < len(msgs) {
			if msgs[i+1].Role != "user" {
				return req, badRequest(fmt.Sprintf("messages.%d: roles must alternate between \"user\" and \"assistant\"", i+1))
			}
			rs, ok := blocks(msgs[i+1].Content)
			if !ok {
				return req, badRequest(fmt.Sprintf("messages.%d.content: Input should be a valid list", i+1))
			}
			for _, bl := range rs {
				if bl.Type != "tool_result" {
					continue
				}
				name, ok := names[bl.ToolUseID]
				if !ok {
					return req, badRequest(fmt.Sprintf("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i+1, bl.ToolUseID))
				}
				content, ok := contentText(bl.Content)
				if !ok {
					return req, badRequest(fmt.Sprintf("messages.%d.content: tool_result content should be a string or a list of blocks", i+1))
				}
				ex.Results = append(ex.Results, model.Result{CallID: bl.ToolUseID, Name: name, Content: content, IsError: bl.IsError})
			}
		}
		if missing := missingResults(ex); len(missing) > 0 {
			return req, badRequest(fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(missing, ", ")))
		}
		req.Conversation.Exchanges = append(req.Conversation.Exchanges, ex)
	}
	return req, nil
}

// writeMessages answers a turn as a message (the shape of the recorded
// responses in anthropic-sdk-go's toolrunner/testdata/cassettes) or,
// streaming, as message_start, content_block_start (text / tool_use),
// content_block_delta (text_delta / input_json_delta), content_block_stop,
// message_delta (stop_reason, usage) and message_stop, with a ping — the
// recorded stream of tool_runner_next_streaming.yaml.
func writeMessages(w http.ResponseWriter, req Request, t model.Turn) {
	stop := "end_turn"
	if len(t.Calls) > 0 {
		stop = "tool_use"
	}
	if t.Stop != "" {
		stop = t.Stop
	}
	usage := map[string]any{"input_tokens": t.Usage.InputTokens, "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": 0, "output_tokens": t.Usage.OutputTokens, "service_tier": "standard"}
	msg := func(content []any, stopReason any, u map[string]any) map[string]any {
		return map[string]any{"id": t.ID, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stopReason, "stop_sequence": nil, "usage": u}
	}
	if !req.Stream {
		var content []any
		if t.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": t.Text})
		}
		for _, c := range t.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": inputObject(c.Args)})
		}
		if content == nil {
			content = []any{}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", "req_fake")
		_ = json.NewEncoder(w).Encode(msg(content, stop, usage))
		return
	}
	s := startSSE(w)
	start := map[string]any{"input_tokens": t.Usage.InputTokens, "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": 0, "output_tokens": 1, "service_tier": "standard"}
	s.event("message_start", map[string]any{"type": "message_start", "message": msg([]any{}, nil, start)})
	idx := 0
	if t.Text != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("ping", map[string]any{"type": "ping"})
		for _, p := range pieces(t.Text, 8) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "text_delta", "text": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range t.Calls {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": ""}})
		for _, p := range pieces(string(c.Args), 7) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// inputObject is a tool_use input: the arguments when they are a JSON
// object, {} otherwise (the API only ever sends an object).
func inputObject(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return json.RawMessage(`{}`)
	}
	return args
}
