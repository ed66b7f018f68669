package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
)

// blockedAndAllowed is a conversation whose first turn had a blocked call
// (write, its result an error) and an allowed one (bash), and whose second
// turn had one call.
var blockedAndAllowed = model.Conversation{
	System: "You are careful.",
	Task:   "Tidy the repo.",
	Exchanges: []model.Exchange{
		{
			Turn: model.Turn{ID: "r1", Text: "Two things.", Calls: []model.ToolCall{
				{ID: "id_w", Name: "write", Args: json.RawMessage(`{"path":"/etc/passwd","content":"x"}`)},
				{ID: "id_b", Name: "bash", Args: json.RawMessage(`{"command":"git status"}`)},
			}},
			Results: []model.Result{
				{CallID: "id_w", Name: "write", Content: "blocked: /etc/passwd is outside the workspace", IsError: true},
				{CallID: "id_b", Name: "bash", Content: "nothing to commit"},
			},
		},
		{
			Turn:    model.Turn{ID: "r2", Calls: []model.ToolCall{{ID: "id_c", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)}}},
			Results: []model.Result{{CallID: "id_c", Name: "bash", Content: "README.md"}},
		},
	},
}

// wantMessages is the message list each API must receive for
// blockedAndAllowed: the provider's own shape, results in call order.
var wantMessages = map[string]string{
	provider.OpenAI: `{"messages":[
		{"role":"system","content":"You are careful."},
		{"role":"user","content":"Tidy the repo."},
		{"role":"assistant","content":"Two things.","tool_calls":[
			{"id":"id_w","type":"function","function":{"name":"write","arguments":"{\"path\":\"/etc/passwd\",\"content\":\"x\"}"}},
			{"id":"id_b","type":"function","function":{"name":"bash","arguments":"{\"command\":\"git status\"}"}}]},
		{"role":"tool","tool_call_id":"id_w","content":"blocked: /etc/passwd is outside the workspace"},
		{"role":"tool","tool_call_id":"id_b","content":"nothing to commit"},
		{"role":"assistant","tool_calls":[
			{"id":"id_c","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
		{"role":"tool","tool_call_id":"id_c","content":"README.md"}]}`,
	provider.OpenAIResponses: `{"instructions":"You are careful.","store":false,"input":[
		{"role":"user","content":"Tidy the repo."},
		{"role":"assistant","content":"Two things."},
		{"type":"function_call","call_id":"id_w","name":"write","arguments":"{\"path\":\"/etc/passwd\",\"content\":\"x\"}"},
		{"type":"function_call","call_id":"id_b","name":"bash","arguments":"{\"command\":\"git status\"}"},
		{"type":"function_call_output","call_id":"id_w","output":"blocked: /etc/passwd is outside the workspace"},
		{"type":"function_call_output","call_id":"id_b","output":"nothing to commit"},
		{"type":"function_call","call_id":"id_c","name":"bash","arguments":"{\"command\":\"ls\"}"},
		{"type":"function_call_output","call_id":"id_c","output":"README.md"}]}`,
	provider.Anthropic: `{"system":[{"type":"text","text":"You are careful."}],"messages":[
		{"role":"user","content":[{"type":"text","text":"Tidy the repo."}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Two things."},
			{"type":"tool_use","id":"id_w","name":"write","input":{"path":"/etc/passwd","content":"x"}},
			{"type":"tool_use","id":"id_b","name":"bash","input":{"command":"git status"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"id_w","is_error":true,"content":[{"type":"text","text":"blocked: /etc/passwd is outside the workspace"}]},
			{"type":"tool_result","tool_use_id":"id_b","content":[{"type":"text","text":"nothing to commit"}]}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"id_c","name":"bash","input":{"command":"ls"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"id_c","content":[{"type":"text","text":"README.md"}]}]}]}`,
}

// conversationPart keeps the keys of a request body that carry the
// conversation.
func conversationPart(t *testing.T, body []byte) any {
	t.Helper()
	m := normal(t, body).(map[string]any)
	part := map[string]any{}
	for _, k := range []string{"messages", "input", "instructions", "store", "system", "previous_response_id"} {
		if v, ok := m[k]; ok {
			part[k] = v
		}
	}
	return part
}

func TestConversationWithResultsExactRequest(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv, url := serve(t, fakeprovider.Reply(model.Turn{Text: "All done."}))
		turn, _ := next(t, dial(t, name, url, testKey), blockedAndAllowed, stream)
		if turn.Text != "All done." {
			t.Errorf("turn text = %q", turn.Text)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("the fake received %d requests, want 1", len(reqs))
		}
		if diff := cmp.Diff(normal(t, []byte(wantMessages[name])), conversationPart(t, reqs[0].Body)); diff != "" {
			t.Errorf("request conversation (-want +got):\n%s", diff)
		}
		// The fake read back the conversation that was sent: both results
		// of the first turn, in call order; the error flag only where the
		// API has one (Anthropic).
		want := blockedAndAllowed
		want.Exchanges = append([]model.Exchange(nil), want.Exchanges...)
		for i := range want.Exchanges {
			ex := &want.Exchanges[i]
			ex.Turn = model.Turn{Text: ex.Turn.Text, Calls: ex.Turn.Calls}
			ex.Results = append([]model.Result(nil), ex.Results...)
			if name != provider.Anthropic {
				for j := range ex.Results {
					ex.Results[j].IsError = false
				}
			}
		}
		if diff := cmp.Diff(want, reqs[0].Conversation); diff != "" {
			t.Errorf("conversation as the fake parsed it (-want +got):\n%s", diff)
		}
		body := normal(t, reqs[0].Body).(map[string]any)
		if got, _ := body["stream"].(bool); got != stream {
			t.Errorf("request stream = %v, want %v", body["stream"], stream)
		}
	})
}

func TestToolsSentAsDefinitions(t *testing.T) {
	want := map[string]string{
		provider.OpenAI: `[{"type":"function","function":{"name":"write","description":"Write a file","parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}}},
			{"type":"function","function":{"name":"bash","description":"Run a command","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}}}]`,
		provider.OpenAIResponses: `[{"type":"function","name":"write","description":"Write a file","strict":false,"parameters":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}},
			{"type":"function","name":"bash","description":"Run a command","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}}]`,
		provider.Anthropic: `[{"name":"write","description":"Write a file","input_schema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}},
			{"name":"bash","description":"Run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}}]`,
	}
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			srv, url := serve(t, fakeprovider.Reply(model.Turn{Text: "ok"}))
			next(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, false)
			body := normal(t, srv.Requests()[0].Body).(map[string]any)
			if diff := cmp.Diff(normal(t, []byte(want[name])), body["tools"]); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}
