package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stepgate/stepgate/agent/model"
)

// chatBody is a Chat Completions request, as far as the fake reads it.
type chatBody struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// ParseChat reads a Chat Completions request body into a Request, or the
// 400 the real API answers: every assistant tool_call must be followed by
// a "tool" message with its tool_call_id before the next other message.
func ParseChat(body []byte) (Request, *Fault) {
	var b chatBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Request{}, badRequest("We could not parse the JSON body of your request.")
	}
	req := Request{API: Chat, Model: b.Model, Stream: b.Stream,
		streamUsage: b.StreamOptions != nil && b.StreamOptions.IncludeUsage}
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	i, msgs := 0, b.Messages
	var system []string
	for ; i < len(msgs) && (msgs[i].Role == "system" || msgs[i].Role == "developer"); i++ {
		s, ok := contentText(msgs[i].Content)
		if !ok {
			return req, badRequest(fmt.Sprintf("Invalid type for 'messages[%d].content'.", i))
		}
		system = append(system, s)
	}
	req.Conversation.System = strings.Join(system, "\n\n")
	if i >= len(msgs) || msgs[i].Role != "user" {
		return req, badRequest("fake provider: the conversation needs the user's task after the system message")
	}
	task, ok := contentText(msgs[i].Content)
	if !ok {
		return req, badRequest(fmt.Sprintf("Invalid type for 'messages[%d].content'.", i))
	}
	req.Conversation.Task = task
	for i++; i < len(msgs); {
		m := msgs[i]
		if m.Role == "tool" {
			return req, badRequest("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
		}
		if m.Role != "assistant" {
			return req, badRequest(fmt.Sprintf("fake provider: messages[%d]: a %q message after the task is not part of an agent conversation", i, m.Role))
		}
		text, ok := contentText(m.Content)
		if !ok {
			return req, badRequest(fmt.Sprintf("Invalid type for 'messages[%d].content'.", i))
		}
		ex := model.Exchange{Turn: model.Turn{Text: text}}
		names := map[string]string{}
		for _, tc := range m.ToolCalls {
			ex.Turn.Calls = append(ex.Turn.Calls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: json.RawMessage(tc.Function.Arguments)})
			names[tc.ID] = tc.Function.Name
		}
		for i++; i < len(msgs) && msgs[i].Role == "tool"; i++ {
			name, ok := names[msgs[i].ToolCallID]
			if !ok {
				return req, badRequest("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			content, ok := contentText(msgs[i].Content)
			if !ok {
				return req, badRequest(fmt.Sprintf("Invalid type for 'messages[%d].content'.", i))
			}
			ex.Results = append(ex.Results, model.Result{CallID: msgs[i].ToolCallID, Name: name, Content: content})
		}
		if missing := missingResults(ex); len(missing) > 0 {
			f := badRequest("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(missing, ", "))
			return req, f
		}
		req.Conversation.Exchanges = append(req.Conversation.Exchanges, ex)
	}
	return req, nil
}

// missingResults are the ids of ex's calls without a result.
func missingResults(ex model.Exchange) []string {
	got := map[string]bool{}
	for _, r := range ex.Results {
		got[r.CallID] = true
	}
	var missing []string
	for _, c := range ex.Turn.Calls {
		if !got[c.ID] {
			missing = append(missing, c.ID)
		}
	}
	return missing
}

// writeChat answers a turn as a chat.completion (the shape of openai-go's
// chatcompletion_test.go and api.md) or, streaming, as chat.completion.chunk
// events: the role, text pieces, per call a first piece with index, id,
// type and name and then argument pieces, the finish_reason, a usage chunk
// with empty choices, and "data: [DONE]" — the recorded stream of
// openai-go's streamaccumulator_test.go.
func writeChat(w http.ResponseWriter, req Request, t model.Turn) {
	finish := "stop"
	if len(t.Calls) > 0 {
		finish = "tool_calls"
	}
	if t.Stop != "" {
		finish = t.Stop
	}
	created := time.Now().Unix()
	usage := map[string]any{"prompt_tokens": t.Usage.InputTokens, "completion_tokens": t.Usage.OutputTokens,
		"total_tokens": t.Usage.InputTokens + t.Usage.OutputTokens}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
		if t.Text != "" || len(t.Calls) == 0 {
			msg["content"] = t.Text
		}
		if len(t.Calls) > 0 {
			var calls []any
			for _, c := range t.Calls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function",
					"function": map[string]any{"name": c.Name, "arguments": string(c.Args)}})
			}
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": t.ID, "object": "chat.completion", "created": created, "model": req.Model,
			"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":              usage,
			"service_tier":       "default",
			"system_fingerprint": "fp_fake",
		})
		return
	}
	s := startSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": t.ID, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"system_fingerprint": "fp_fake",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	for _, p := range pieces(t.Text, 8) {
		s.event("", chunk(map[string]any{"content": p}, nil))
	}
	for i, c := range t.Calls {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil))
		for _, p := range pieces(string(c.Args), 7) {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": p}}}}, nil))
		}
	}
	s.event("", chunk(map[string]any{}, finish))
	if req.streamUsage {
		s.event("", map[string]any{"id": t.ID, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"system_fingerprint": "fp_fake", "choices": []any{}, "usage": usage})
	}
	s.raw("[DONE]")
}
