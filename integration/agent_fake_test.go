package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// chatFake is an OpenAI Chat Completions server (non-streaming) for
// engine agent: it answers turn n (the request's assistant messages + 1)
// with turns[n-1], counts the requests of each turn, and keeps the tool
// results each request carried, by call id, and the Authorization headers.
type chatFake struct {
	srv   *httptest.Server
	turns []fakeTurn

	mu      sync.Mutex
	sent    map[int]int       // turn → requests
	results map[string]string // call id → the result's content, as last sent
	auth    map[string]bool
}

// fakeTurn is one response: text, and calls (name, arguments JSON).
type fakeTurn struct {
	text  string
	calls [][2]string
}

func newChatFake(t *testing.T, turns ...fakeTurn) *chatFake {
	f := &chatFake{turns: turns, sent: map[int]int{}, results: map[string]string{}, auth: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the base URL engine agent's --base-url takes.
func (f *chatFake) url() string { return f.srv.URL + "/v1" }

func (f *chatFake) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no such path"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	n := 1
	f.mu.Lock()
	f.auth[r.Header.Get("Authorization")] = true
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			n++
		case "tool":
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				s = string(m.Content)
			}
			f.results[m.ToolCallID] = s
		}
	}
	f.sent[n]++
	f.mu.Unlock()
	if n > len(f.turns) {
		http.Error(w, `{"error":{"message":"the script has no more turns"}}`, http.StatusBadRequest)
		return
	}
	t := f.turns[n-1]
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": t.text}
	finish := "stop"
	if len(t.calls) > 0 {
		var cs []call
		for i, c := range t.calls {
			cs = append(cs, call{ID: fmt.Sprintf("call_%d_%d", n, i+1), Type: "function", Function: fn{Name: c[0], Arguments: c[1]}})
		}
		msg["tool_calls"], finish = cs, "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": 1, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100 * n, "completion_tokens": 10 + n, "total_tokens": 110 + 101*n},
	})
}

// requests is how often each turn was asked for.
func (f *chatFake) requests() map[int]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int]int{}
	for k, v := range f.sent {
		out[k] = v
	}
	return out
}

// result is the content of call id's result as the model last read it.
func (f *chatFake) result(id string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.results[id]
	return s, ok
}
