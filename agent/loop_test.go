package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/executortest"
)

// A turn with two parallel calls is one step, its calls in model order
// with the model's ids; both results come back to the model in that
// order, a blocked call's and an unknown tool's as errors; the model's
// answer ends the run completed with its text, and the log holds the
// settings and both turns with their usage.
func TestLoopGivesResultsBackAndEndsWithTheAnswer(t *testing.T) {
	var cnt executortest.Counts
	h := host(t, &cnt)
	api := commands.Wire{Host: h}
	ctx := ctxT(t)
	m := &scripted{turns: func(n int, _ model.Conversation) (model.Turn, error) {
		if n == 1 {
			return calls(1, "Two calls.", [2]string{"echo", `{"text":"hi"}`}, [2]string{"echo", `{"text":"deny me"}`}, [2]string{"nope", `{}`}), nil
		}
		return answer(2, "All done."), nil
	}}
	out := &quiet{}
	req := settings("say hi")
	req.Location = t.TempDir()
	res, err := agent.Start(ctx, agent.Config{API: api, Provider: m, Out: out}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cause != events.CauseCompleted || res.Text != "All done." || res.Steps != 1 || res.Turns != 2 {
		t.Errorf("result %+v, want completed with the answer after 1 step and 2 turns", res)
	}
	sent := m.requests()
	if len(sent) != 2 {
		t.Fatalf("%d requests, want 2", len(sent))
	}
	got := sent[1].Conversation.Exchanges[0].Results
	want := []model.Result{
		{CallID: "c1_1", Name: "echo", Content: "hi"},
		{CallID: "c1_2", Name: "echo", IsError: true},
		{CallID: "c1_3", Name: "nope", Content: "Unknown tool: nope", IsError: true},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b model.Result) bool {
		return a.CallID == b.CallID && a.Name == b.Name && a.IsError == b.IsError && (a.Content == "" || b.Content == "" || a.Content == b.Content)
	})); d != "" {
		t.Errorf("results given back (-want +got):\n%s", d)
	}
	if got[1].Content == "" {
		t.Error("the blocked call's result has no reason")
	}
	if len(sent[0].Tools) == 0 || sent[0].Conversation.Task != "say hi" || sent[0].Model != "m1" {
		t.Errorf("first request: %d tools, task %q, model %q", len(sent[0].Tools), sent[0].Conversation.Task, sent[0].Model)
	}
	r, err := api.Show(ctx, client.ShowRequest{Run: res.Run})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != client.StatusEnded || r.End.Cause != events.CauseCompleted || r.End.Reason != "All done." {
		t.Errorf("run %s %+v, want ended completed with the answer", r.Status, r.End)
	}
	if len(r.Turns) != 2 || r.Turns[0].Usage.InputTokens != 100 || len(r.Turns[0].Calls) != 3 || r.Turns[0].Calls[0].ID != "c1_1" {
		t.Errorf("recorded turns %+v", r.Turns)
	}
	if r.Snapshot.Model == nil || r.Snapshot.Model.Task != "say hi" {
		t.Errorf("settings %+v", r.Snapshot.Model)
	}
}

// A provider error that is retryable is sent again after the backoff (the
// provider's Retry-After when longer), a bounded number of times; one that
// is not ends the run failed with the provider's message.
func TestLoopRetriesAndEndsOnAProviderError(t *testing.T) {
	var cnt executortest.Counts
	h := host(t, &cnt)
	api := commands.Wire{Host: h}
	ctx := ctxT(t)
	var waits []string
	fails := 0
	m := &scripted{turns: func(n int, _ model.Conversation) (model.Turn, error) {
		switch fails++; fails {
		case 1:
			return model.Turn{}, &model.Error{Status: 429, Retryable: true, RetryAfter: 7e9, Message: "slow down"}
		case 2:
			return model.Turn{}, &model.Error{Status: 503, Retryable: true, Message: "overloaded"}
		case 3:
			return calls(1, "", [2]string{"echo", `{"text":"x"}`}), nil
		}
		return model.Turn{}, &model.Error{Status: 401, Message: "invalid api key sk-test-SECRET"}
	}}
	cfg := agent.Config{API: api, Provider: m, Out: &quiet{}, Retry: agent.Retry{Attempts: 3, Base: 1e9, Max: 30e9},
		Sleep:  func(_ context.Context, d time.Duration) error { waits = append(waits, d.String()); return nil },
		Redact: func(s string) string { return strings.ReplaceAll(s, "sk-test-SECRET", "[key]") }}
	req := settings("t")
	req.Location = t.TempDir()
	res, err := agent.Start(ctx, cfg, req)
	var me *model.Error
	if !errors.As(err, &me) || me.Status != 401 {
		t.Fatalf("err %v, want the provider's 401", err)
	}
	if d := cmp.Diff([]string{"7s", "2s"}, waits); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if res == nil || res.Cause != events.CauseFailed {
		t.Fatalf("result %+v, want failed", res)
	}
	r, err := api.Show(ctx, client.ShowRequest{Run: res.Run})
	if err != nil {
		t.Fatal(err)
	}
	if r.End == nil || r.End.Cause != events.CauseFailed || !strings.Contains(r.End.Reason, "invalid api key [key]") {
		t.Errorf("end %+v, want failed with the provider's message, the key redacted", r.End)
	}
}
