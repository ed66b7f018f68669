package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// Every built-in tool through a real `engine run` process: a scripted model
// writes, reads, edits, patches, searches, runs bash, keeps a todo list,
// loads a skill, fetches a page from a local HTTP server, searches a local
// endpoint, and finally asks the human a question; `engine approve
// --answers` (another process) answers it and `engine show` reads the whole
// run back from the log.
func TestEngineRunScriptUsesEveryTool(t *testing.T) {
	web := http.NewServeMux()
	web.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Release notes</h1><p>It <em>works</em>.</p></body></html>")
	})
	web.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			Query string `json:"query"`
		}
		json.NewDecoder(r.Body).Decode(&q)
		fmt.Fprintf(w, `{"results":[{"title":"About %s","url":"https://example.test/%s"}]}`, q.Query, q.Query)
	})
	srv := httptest.NewServer(web)
	t.Cleanup(srv.Close)

	loc, data, cfg := t.TempDir(), t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"main.go":                           "package main\n\nconst v = 1\n",
		"notes/plan.txt":                    "TODO: ship\n",
		".stepgate/skills/release/SKILL.md": "Tag, then publish.\n",
		filepath.Join(cfg, "stepgate", "config.yaml"): "websearch: { endpoint: \"" + srv.URL + "/search\" }\n",
	} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(loc, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type args map[string]any
	step := func(calls ...commands.CallRequest) string {
		b, _ := json.Marshal(map[string]any{"calls": calls})
		return string(b)
	}
	c := func(id, tool string, a args) commands.CallRequest {
		b, _ := json.Marshal(a)
		return commands.CallRequest{ID: id, Tool: tool, Args: b}
	}
	script := strings.Join([]string{
		"# every built-in tool, the question last",
		step(c("w", "write", args{"path": "new.txt", "content": "draft\n"}),
			c("r", "read", args{"path": "main.go"}),
			c("gl", "glob", args{"pattern": "**/*.go"}),
			c("gr", "grep", args{"pattern": "TODO"})),
		step(c("e", "edit", args{"path": "main.go", "oldString": "v = 1", "newString": "v = 2"}),
			c("p", "apply_patch", args{"patchText": "*** Begin Patch\n*** Add File: lib/x.go\n+package lib\n*** Update File: new.txt\n-draft\n+final\n*** End Patch"})),
		step(c("b", "bash", args{"command": "cat main.go new.txt"}),
			c("t", "todowrite", args{"todos": []args{{"content": "ship", "status": "in_progress", "priority": "high"}}}),
			c("s", "skill", args{"name": "release"}),
			c("wf", "webfetch", args{"url": srv.URL + "/page"}),
			c("ws", "websearch", args{"query": "nats"})),
		step(c("q", "question", args{"questions": []args{{"question": "Ship it?"}}})),
	}, "\n")
	scriptFile := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(scriptFile, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(engineBin, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("engine %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}

	out := run("run", "--data", data, "--location", loc, "--script", scriptFile, "--json")
	var runID, ticket string
	got := map[string]string{}
	for line := range strings.Lines(out) {
		var o commands.StepOutcome
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		runID = o.Run
		for _, r := range o.Results {
			if r.IsError || r.Verdict != "allow" {
				t.Errorf("%s (%s): %s, error %v: %s", r.CallID, r.Tool, r.Verdict, r.IsError, r.Content)
			}
			got[r.CallID] = r.Content
		}
		if len(o.Tickets) > 0 {
			ticket = o.Tickets[0].ID
		}
	}
	for id, want := range map[string]string{
		"w": "Created new.txt", "r": "const v = 1", "gl": "main.go", "gr": "notes/plan.txt:1: TODO: ship",
		"e": "Edited main.go: 1 replacement", "p": "added lib/x.go\nupdated new.txt",
		"b": "const v = 2\nfinal", "t": "[~] ship (high)", "s": "Tag, then publish.",
		"wf": "# Release notes\n\nIt _works_.", "ws": "1. About nats\n   https://example.test/nats",
	} {
		if !strings.Contains(got[id], want) {
			t.Errorf("call %s: %q does not hold %q", id, got[id], want)
		}
	}
	if ticket == "" {
		t.Fatalf("the question asked nothing; output:\n%s", out)
	}

	run("approve", ticket, "--data", data, "--answers", `["yes"]`)
	var shown projection.Run
	if err := json.Unmarshal([]byte(run("show", runID, "--data", data, "--json")), &shown); err != nil {
		t.Fatal(err)
	}
	last := shown.Steps[len(shown.Steps)-1]
	if res := last.Calls[0].Result; !last.Final || res == nil || res.Parts[0].Text != "Q: Ship it?\nA: yes" {
		t.Errorf("the question after the answer: final %v, result %+v", last.Final, res)
	}
	var todos []struct{ Content, Status string }
	if err := json.Unmarshal(shown.State["todos"], &todos); err != nil || len(todos) != 1 || todos[0].Content != "ship" || todos[0].Status != "in_progress" {
		t.Errorf("run state todos %s (%v), want the one item written", shown.State["todos"], err)
	}
}
