package provider_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
)

// next sends one request for the task with the test tools and returns the
// turn and the text OnText received.
func next(t *testing.T, p model.Provider, conv model.Conversation, stream bool) (model.Turn, string) {
	t.Helper()
	var got strings.Builder
	turn, err := p.Next(context.Background(), model.Request{
		Model: "test-model", Tools: tools, Conversation: conv, Stream: stream,
		OnText: func(s string) { got.WriteString(s) },
	})
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return turn, got.String()
}

// callsOf is the calls' names and arguments, ids left out (the fake makes
// them).
func callsOf(t *testing.T, turn model.Turn) []string {
	t.Helper()
	var out []string
	for _, c := range turn.Calls {
		if c.ID == "" {
			t.Errorf("call %s has no id", c.Name)
		}
		out = append(out, c.Name+" "+string(c.Args))
	}
	return out
}

func TestTextOnlyTurn(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		const text = "The answer is 42, and here is why: ünïcödé text streams in pieces."
		_, url := serve(t, fakeprovider.Reply(model.Turn{Text: text}))
		turn, seen := next(t, dial(t, name, url, testKey), model.Conversation{Task: "what is the answer?"}, stream)
		if turn.Text != text {
			t.Errorf("turn text = %q, want %q", turn.Text, text)
		}
		if seen != text {
			t.Errorf("OnText received %q, want the whole text %q", seen, text)
		}
		if len(turn.Calls) != 0 {
			t.Errorf("calls = %v, want none", turn.Calls)
		}
		if turn.ID == "" || turn.Stop == "" {
			t.Errorf("turn id %q stop %q: want both", turn.ID, turn.Stop)
		}
		if turn.Usage.InputTokens == 0 || turn.Usage.OutputTokens == 0 {
			t.Errorf("usage = %+v, want both counts", turn.Usage)
		}
	})
}

func TestUsageAsReported(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		want := model.Usage{InputTokens: 1234, OutputTokens: 56}
		_, url := serve(t, fakeprovider.Reply(model.Turn{Text: "hi", Usage: want}))
		turn, _ := next(t, dial(t, name, url, testKey), model.Conversation{Task: "hi"}, stream)
		if turn.Usage != want {
			t.Errorf("usage = %+v, want %+v", turn.Usage, want)
		}
	})
}

func TestOneToolCall(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		_, url := serve(t, fakeprovider.Reply(model.Turn{Calls: []model.ToolCall{
			{Name: "write", Args: []byte(`{"path":"notes/a.txt","content":"line one\nline \"two\""}`)},
		}}))
		turn, _ := next(t, dial(t, name, url, testKey), model.Conversation{Task: "write a file"}, stream)
		want := []string{`write {"path":"notes/a.txt","content":"line one\nline \"two\""}`}
		if diff := cmp.Diff(want, callsOf(t, turn)); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if turn.Text != "" {
			t.Errorf("text = %q, want none", turn.Text)
		}
	})
}

func TestParallelCallsKeepModelOrder(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		_, url := serve(t, fakeprovider.Reply(model.Turn{Text: "Three at once.", Calls: []model.ToolCall{
			{Name: "write", Args: []byte(`{"path":"b.txt","content":"b"}`)},
			{Name: "bash", Args: []byte(`{"command":"ls -la"}`)},
			{Name: "write", Args: []byte(`{"path":"a.txt","content":"a"}`)},
		}}))
		turn, _ := next(t, dial(t, name, url, testKey), model.Conversation{Task: "go"}, stream)
		want := []string{
			`write {"path":"b.txt","content":"b"}`,
			`bash {"command":"ls -la"}`,
			`write {"path":"a.txt","content":"a"}`,
		}
		if diff := cmp.Diff(want, callsOf(t, turn)); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		if turn.Text != "Three at once." {
			t.Errorf("text = %q", turn.Text)
		}
		seen := map[string]bool{}
		for _, c := range turn.Calls {
			if seen[c.ID] {
				t.Errorf("call id %s twice", c.ID)
			}
			seen[c.ID] = true
		}
	})
}
