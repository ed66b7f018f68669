package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// otlpValue is an exported attribute's value as text (a list's items
// joined with commas).
func otlpValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *commonpb.AnyValue_ArrayValue:
		var items []string
		for _, it := range x.ArrayValue.GetValues() {
			items = append(items, otlpValue(it))
		}
		return strings.Join(items, ",")
	}
	return fmt.Sprint(v)
}

// engine agent with OTEL_EXPORTER_OTLP_ENDPOINT exports a chat span per
// model turn over OTLP/HTTP, carrying the GenAI semantic conventions'
// attributes with the token usage the provider reported (a fake Chat
// Completions server's numbers), the embedded engine's execute_tool span
// of the turn's call in the same trace.
func TestAgentExportsEachTurnsUsageOverOTLP(t *testing.T) {
	recv := &otlpReceiver{spans: map[string][]string{}, attrs: map[string][]map[string]string{}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	fake := fakeprovider.New(fakeprovider.Config{Script: fakeprovider.ByTurn(
		model.Turn{Text: "Reading.", Calls: []model.ToolCall{{Name: "list", Args: []byte(`{"path":"."}`)}}, Usage: model.Usage{InputTokens: 1234, OutputTokens: 56}},
		model.Turn{Text: "Done.", Usage: model.Usage{InputTokens: 1400, OutputTokens: 7}},
	)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, stop, err := fake.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"agent", "--data", t.TempDir(), "--provider", "openai", "--model", "fake-model", "--base-url", root + "/v1",
		"--location", t.TempDir(), "--json", "--stream=false", "list the files"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("engine agent: %v\n%s", err, stderr.String())
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	chats := recv.attrs["chat fake-model"]
	if len(chats) != 2 {
		t.Fatalf("%d chat fake-model spans, want 2 (spans: %v)", len(chats), recv.spans)
	}
	for i, want := range []map[string]string{
		{"gen_ai.usage.input_tokens": "1234", "gen_ai.usage.output_tokens": "56", "gen_ai.response.finish_reasons": "tool_calls", "stepgate.turn": "1"},
		{"gen_ai.usage.input_tokens": "1400", "gen_ai.usage.output_tokens": "7", "gen_ai.response.finish_reasons": "stop", "stepgate.turn": "2"},
	} {
		want["gen_ai.operation.name"], want["gen_ai.provider.name"], want["gen_ai.system"], want["gen_ai.request.model"] = "chat", "openai", "openai", "fake-model"
		for k, v := range want {
			if chats[i][k] != v {
				t.Errorf("turn %d's span: %s = %q, want %q", i+1, k, chats[i][k], v)
			}
		}
		if chats[i]["gen_ai.response.id"] == "" {
			t.Errorf("turn %d's span has no gen_ai.response.id: %v", i+1, chats[i])
		}
	}
	trace := recv.spans["chat fake-model"][0]
	if got := recv.spans["execute_tool list"]; len(got) != 1 || got[0] != trace {
		t.Errorf("execute_tool list spans in traces %v, want one in the agent's trace %s (all: %v)", got, trace, recv.spans)
	}
	if got := recv.spans["invoke_agent build"]; len(got) != 1 || got[0] != trace {
		t.Errorf("invoke_agent build spans in traces %v, want one in %s", got, trace)
	}
}
