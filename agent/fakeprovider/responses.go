package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/stepgate/stepgate/agent/model"
)

// responsesBody is a Responses API request, as far as the fake reads it.
type responsesBody struct {
	Model              string          `json:"model"`
	Stream             bool            `json:"stream"`
	Instructions       string          `json:"instructions"`
	PreviousResponseID string          `json:"previous_response_id"`
	Input              json.RawMessage `json:"input"`
	Tools              []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// ParseResponses reads a Responses request body into a Request, or the 400
// the real API answers: a previous_response_id the fake never stored (it
// stores nothing, as with store=false), a function_call without its
// function_call_output.
func ParseResponses(body []byte) (Request, *Fault) {
	var b responsesBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Request{}, badRequest("We could not parse the JSON body of your request.")
	}
	req := Request{API: Responses, Model: b.Model, Stream: b.Stream}
	req.Conversation.System = b.Instructions
	for _, t := range b.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	if b.PreviousResponseID != "" {
		return req, badRequest(fmt.Sprintf("Previous response with id '%s' not found.", b.PreviousResponseID))
	}
	var items []responsesItem
	if s, ok := contentText(b.Input); ok && len(b.Input) > 0 && b.Input[0] == '"' {
		items = []responsesItem{{Type: "message", Role: "user", Content: mustJSON(s)}}
	} else if err := json.Unmarshal(b.Input, &items); err != nil {
		return req, badRequest("Invalid type for 'input': expected a string or an array of input items.")
	}
	if len(items) == 0 || items[0].Role != "user" || (items[0].Type != "" && items[0].Type != "message") {
		return req, badRequest("fake provider: the input needs the user's task first")
	}
	task, ok := contentText(items[0].Content)
	if !ok {
		return req, badRequest("Invalid type for 'input[0].content'.")
	}
	req.Conversation.Task = task
	var cur *model.Exchange
	names := map[string]string{}
	flush := func() {
		if cur != nil {
			req.Conversation.Exchanges = append(req.Conversation.Exchanges, *cur)
			cur = nil
		}
	}
	for i, it := range items[1:] {
		switch it.Type {
		case "", "message":
			if it.Role != "assistant" {
				return req, badRequest(fmt.Sprintf("fake provider: input[%d]: a %q message after the task is not part of an agent conversation", i+1, it.Role))
			}
			text, ok := contentText(it.Content)
			if !ok {
				return req, badRequest(fmt.Sprintf("Invalid type for 'input[%d].content'.", i+1))
			}
			if cur == nil || len(cur.Results) > 0 || len(cur.Turn.Calls) > 0 {
				flush()
				cur = &model.Exchange{}
			}
			cur.Turn.Text += text
		case "function_call":
			if cur == nil || len(cur.Results) > 0 {
				flush()
				cur = &model.Exchange{}
			}
			cur.Turn.Calls = append(cur.Turn.Calls, model.ToolCall{ID: it.CallID, Name: it.Name, Args: json.RawMessage(it.Arguments)})
			names[it.CallID] = it.Name
		case "function_call_output":
			name, ok := names[it.CallID]
			if cur == nil || !ok {
				return req, badRequest(fmt.Sprintf("No tool call found for function call output with call_id %s.", it.CallID))
			}
			out, ok := contentText(it.Output)
			if !ok {
				return req, badRequest(fmt.Sprintf("Invalid type for 'input[%d].output'.", i+1))
			}
			cur.Results = append(cur.Results, model.Result{CallID: it.CallID, Name: name, Content: out})
		default:
			return req, badRequest(fmt.Sprintf("fake provider: input[%d]: item type %q is not supported", i+1, it.Type))
		}
	}
	flush()
	for _, ex := range req.Conversation.Exchanges {
		if missing := missingResults(ex); len(missing) > 0 {
			return req, badRequest("No tool output found for function call " + missing[0] + ".")
		}
	}
	return req, nil
}

// responsesOutput is the response's output items: a message with one
// output_text part, then one function_call item per call.
func responsesOutput(t model.Turn, done bool) []any {
	status := "completed"
	if !done {
		status = "in_progress"
	}
	var out []any
	if t.Text != "" {
		text := ""
		if done {
			text = t.Text
		}
		out = append(out, messageItem(t, status, text, done))
	}
	for i, c := range t.Calls {
		args := ""
		if done {
			args = string(c.Args)
		}
		out = append(out, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%s_%d", t.ID, i),
			"call_id": c.ID, "name": c.Name, "arguments": args, "status": status})
	}
	return out
}

func messageItem(t model.Turn, status, text string, withPart bool) map[string]any {
	content := []any{}
	if withPart {
		content = append(content, map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}})
	}
	return map[string]any{"type": "message", "id": "msg_" + t.ID, "status": status, "role": "assistant", "content": content}
}

// responseObject is the response object (the Responses API reference's
// "response" and the response.created/completed events of openai-go's
// internal/websockettest/testdata fixtures).
func responseObject(req Request, t model.Turn, done bool) map[string]any {
	r := map[string]any{
		"id": t.ID, "object": "response", "created_at": time.Now().Unix(), "model": req.Model,
		"status": "in_progress", "error": nil, "incomplete_details": nil, "instructions": nil,
		"output": []any{}, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		"store": false, "usage": nil,
	}
	if req.Conversation.System != "" {
		r["instructions"] = req.Conversation.System
	}
	if done {
		r["status"] = "completed"
		r["output"] = responsesOutput(t, true)
		r["usage"] = map[string]any{
			"input_tokens": t.Usage.InputTokens, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": t.Usage.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": t.Usage.InputTokens + t.Usage.OutputTokens,
		}
	}
	return r
}

// writeResponses answers a turn as a response object or, streaming, as the
// API's events: response.created, response.in_progress, per output item
// response.output_item.added, its deltas (response.content_part.added,
// response.output_text.delta/done, response.content_part.done; or
// response.function_call_arguments.delta/done) and
// response.output_item.done, then response.completed with the usage.
func writeResponses(w http.ResponseWriter, req Request, t model.Turn) {
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(responseObject(req, t, true))
		return
	}
	s := startSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		s.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": responseObject(req, t, false)})
	ev("response.in_progress", map[string]any{"response": responseObject(req, t, false)})
	final := responsesOutput(t, true)
	idx := 0
	if t.Text != "" {
		item := messageItem(t, "in_progress", "", false)
		id := item["id"]
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": item})
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}, "logprobs": []any{}}
		ev("response.content_part.added", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "part": part})
		for _, p := range pieces(t.Text, 8) {
			ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "delta": p, "logprobs": []any{}})
		}
		ev("response.output_text.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "text": t.Text, "logprobs": []any{}})
		ev("response.content_part.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": t.Text, "annotations": []any{}, "logprobs": []any{}}})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": final[idx]})
		idx++
	}
	for i, c := range t.Calls {
		id := fmt.Sprintf("fc_%s_%d", t.ID, i)
		ev("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{
			"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": "", "status": "in_progress"}})
		for _, p := range pieces(string(c.Args), 7) {
			ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": p})
		}
		ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "name": c.Name, "arguments": string(c.Args)})
		ev("response.output_item.done", map[string]any{"output_index": idx, "item": final[idx]})
		idx++
	}
	ev("response.completed", map[string]any{"response": responseObject(req, t, true)})
}
