package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	sgclient "github.com/stepgate/stepgate/client"
)

// The token usage a provider reports for each model turn is recorded
// with the turn and shown: engine show prints each turn's and the run's
// totals, show --json has each turn's, and the report has a row a turn
// and a row of totals (a fake Chat Completions server's numbers).
func TestAgentUsageInShowAndReport(t *testing.T) {
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
	data := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"agent", "--data", data, "--provider", "openai", "--model", "fake-model", "--base-url", root + "/v1",
		"--location", t.TempDir(), "--json", "--stream=false", "list the files"}, &stdout, &stderr); err != nil {
		t.Fatalf("engine agent: %v\n%s", err, stderr.String())
	}
	var runID string
	for _, line := range strings.Split(stdout.String(), "\n") {
		var ev struct{ Event, Run string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "end" {
			runID = ev.Run
		}
	}
	if runID == "" {
		t.Fatalf("no end event:\n%s", stdout.String())
	}
	verb := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--data", data), &out, &errb); err != nil {
			t.Fatalf("engine %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	text := verb("show", runID, "--color=never")
	for _, want := range []string{"model openai fake-model at " + root + "/v1  2 turns, 2634 tokens in, 63 out",
		"turn 1  [tool_calls, 1234 tokens in, 56 out, 1 calls]", "turn 2  [stop, 1400 tokens in, 7 out, 0 calls]"} {
		if !strings.Contains(text, want) {
			t.Errorf("engine show lacks %q:\n%s", want, text)
		}
	}
	var r sgclient.Run
	if err := json.Unmarshal([]byte(verb("show", runID, "--json")), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Turns) != 2 || r.Turns[0].Usage.InputTokens != 1234 || r.Turns[0].Usage.OutputTokens != 56 || r.Turns[1].Usage.InputTokens != 1400 || r.Turns[1].Usage.OutputTokens != 7 {
		t.Errorf("show --json turns %+v", r.Turns)
	}
	report := filepath.Join(t.TempDir(), "r.html")
	verb("report", runID, "-o", report)
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<td>1</td><td>tool_calls</td><td>1234</td><td>56</td><td>1</td>", "<td>2</td><td>stop</td><td>1400</td><td>7</td><td>0</td>",
		"<tr class=\"total\"><th>all 2</th><th></th><th>2634</th><th>63</th>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
