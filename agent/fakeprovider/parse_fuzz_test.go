package fakeprovider_test

import (
	"net/http"
	"testing"

	"github.com/stepgate/stepgate/agent/fakeprovider"
)

// checkParsed holds for any body: a refusal is a 400; an accepted request
// has, for every call of every turn, exactly one result naming that call
// (the fake is as strict as the APIs).
func checkParsed(t *testing.T, req fakeprovider.Request, f *fakeprovider.Fault) {
	if f != nil {
		if f.Status != http.StatusBadRequest || f.Message == "" {
			t.Fatalf("refusal %+v: want a 400 with a message", f)
		}
		return
	}
	for i, ex := range req.Conversation.Exchanges {
		calls := map[string]bool{}
		for _, c := range ex.Turn.Calls {
			calls[c.ID] = true
		}
		answered := map[string]bool{}
		for _, r := range ex.Results {
			if !calls[r.CallID] {
				t.Fatalf("exchange %d: result for %q, not a call of the turn", i, r.CallID)
			}
			answered[r.CallID] = true
		}
		for id := range calls {
			if !answered[id] {
				t.Fatalf("exchange %d: call %q accepted without its result", i, id)
			}
		}
	}
	_ = fakeprovider.ConversationKey(req.Conversation)
}

func FuzzParseChat(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"t"},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, fault := fakeprovider.ParseChat(body)
		checkParsed(t, req, fault)
	})
}

func FuzzParseResponses(f *testing.F) {
	f.Add([]byte(`{"model":"m","input":[{"role":"user","content":"t"},{"type":"function_call","call_id":"a","name":"bash","arguments":"{}"},{"type":"function_call_output","call_id":"a","output":"x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, fault := fakeprovider.ParseResponses(body)
		checkParsed(t, req, fault)
	})
}

func FuzzParseMessages(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"t"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x","is_error":true}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, fault := fakeprovider.ParseMessages(body)
		checkParsed(t, req, fault)
	})
}
