package integration

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/client"
)

// agentArgs are engine agent's flags against the served engine at url and
// the fake model f.
func agentArgs(url string, f *chatFake, more ...string) []string {
	return append([]string{"--nats", url, "--provider", "openai", "--model", "fake", "--base-url", f.url()}, more...)
}

// showAgentRun is `engine show RUN --json` against url.
func showAgentRun(t *testing.T, url, run string) *client.Run {
	t.Helper()
	var r client.Run
	if err := json.Unmarshal([]byte(engine(t, "show", run, "--json", "--nats", url)), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// engine agent drives a served engine with a model (a fake Chat
// Completions server): one turn writes a file and runs a command (one
// step, two calls, the model's ids), both results reach the model, and
// the model's answer ends the run completed; the log has both turns with
// their token usage, and engine show prints them.
func TestAgentWritesAFileRunsACommandAndFinishes(t *testing.T) {
	addr := freeAddr(t)
	url := "nats://" + addr
	serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1")
	ws := agentWorkspace(t, false)
	f := writeAndRun(t)
	p := startAgent(t, []string{"OPENAI_API_KEY="}, agentArgs(url, f, "--location", ws, "write out.txt and append to ran.log")...)
	if code := p.exit(t); code != 0 {
		t.Fatalf("engine agent exit %d\n%s", code, p.stderr.String())
	}
	end := p.await(t, "end")
	if end["cause"] != "completed" || end["text"] != "Done: out.txt is written and the command ran." {
		t.Errorf("end %v", end)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "hello from the model\n" {
		t.Errorf("out.txt %q", b)
	}
	if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 1 {
		t.Errorf("ran.log %q, want one line", got)
	}
	if r, ok := f.result("call_1_2"); !ok || !strings.Contains(r, "appended") {
		t.Errorf("bash's result as the model read it: %q, %v", r, ok)
	}
	if r, ok := f.result("call_1_1"); !ok || r == "" {
		t.Errorf("write's result as the model read it: %q, %v", r, ok)
	}
	if got := f.requests(); got[1] != 1 || got[2] != 1 || len(got) != 2 {
		t.Errorf("requests by turn %v, want each turn once", got)
	}
	run, _ := end["run"].(string)
	r := showAgentRun(t, url, run)
	if len(r.Turns) != 2 || r.Turns[0].Usage.InputTokens != 100 || r.Turns[1].Usage.OutputTokens != 12 ||
		len(r.Steps) != 1 || len(r.Steps[0].Calls) != 2 || r.Steps[0].Calls[0].ID != "call_1_1" {
		t.Errorf("run as shown: %d turns %+v, %d steps", len(r.Turns), r.Turns, len(r.Steps))
	}
	report := filepath.Join(t.TempDir(), "report.html")
	engine(t, "report", run, "-o", report, "--nats", url)
	if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "model turns") || !strings.Contains(string(b), "Done: out.txt is written") {
		t.Errorf("the report lacks the model's turns (%v)", err)
	}
	text := engine(t, "show", run, "--nats", url)
	for _, want := range []string{"model openai fake", "turn 1", "turn 2", "100 tokens in", "Done: out.txt is written"} {
		if !strings.Contains(text, want) {
			t.Errorf("engine show lacks %q:\n%s", want, text)
		}
	}
}

// A rejection with a message reaches the model as that call's result,
// beside the allowed call's result: the agent stops at the ticket
// (--on-ask exit, exit code 3), engine reject -m answers it from another
// process, and engine agent --resume finishes.
func TestAgentRejectionFeedbackReachesTheModel(t *testing.T) {
	addr := freeAddr(t)
	url := "nats://" + addr
	serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1")
	ws := agentWorkspace(t, true)
	f := writeAndRun(t)
	p := startAgent(t, nil, agentArgs(url, f, "--location", ws, "--on-ask", "exit", "write and run")...)
	if code := p.exit(t); code != 3 {
		t.Fatalf("exit %d, want 3 (awaiting)\n%s", code, p.stderr.String())
	}
	tk := p.await(t, "ticket")
	if tk == nil || tk["tool"] != "bash" {
		t.Fatalf("ticket %v", tk)
	}
	engine(t, "reject", tk["ticket"].(string), "-m", "do not run commands here", "--nats", url)
	q := startAgent(t, nil, "--nats", url, "--resume", tk["run"].(string))
	if code := q.exit(t); code != 0 {
		t.Fatalf("resume exit %d\n%s", code, q.stderr.String())
	}
	if r, _ := f.result("call_1_2"); !strings.Contains(r, "do not run commands here") {
		t.Errorf("the rejected call's result as the model read it: %q", r)
	}
	if r, _ := f.result("call_1_1"); r == "" {
		t.Error("the allowed call's result did not reach the model")
	}
	if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 0 {
		t.Errorf("the rejected command ran: %q", got)
	}
	if got := f.requests(); got[1] != 1 || got[2] != 1 {
		t.Errorf("requests by turn %v, want each once", got)
	}
}

// On an embedded engine (--data) no other process can answer a ticket
// while engine agent holds the data directory, so it stops at the ticket
// (exit code 3) by default; engine approve --data answers it (and runs the
// call); engine agent --data --resume RUN, with the run's own provider,
// model and base URL, finishes. --on-ask wait on --data without --listen
// is refused as a usage error.
func TestAgentOnAnEmbeddedEngine(t *testing.T) {
	data := t.TempDir()
	ws := agentWorkspace(t, true)
	f := writeAndRun(t)
	base := []string{"--data", data, "--provider", "openai", "--model", "fake", "--base-url", f.url()}
	refused := startAgent(t, nil, append(base, "--location", ws, "--on-ask", "wait", "write and run")...)
	if code := refused.exit(t); code != 2 || !strings.Contains(refused.stderr.String(), "--listen") {
		t.Errorf("--on-ask wait on --data: exit %d, %s; want a usage error naming --listen", code, refused.stderr.String())
	}
	p := startAgent(t, nil, append(base, "--location", ws, "write and run")...)
	if code := p.exit(t); code != 3 {
		t.Fatalf("exit %d, want 3\n%s", code, p.stderr.String())
	}
	tk := p.await(t, "ticket")
	engine(t, "approve", tk["ticket"].(string), "--data", data)
	q := startAgent(t, nil, "--data", data, "--resume", tk["run"].(string))
	if code := q.exit(t); code != 0 {
		t.Fatalf("resume exit %d\n%s", code, q.stderr.String())
	}
	if end := q.await(t, "end"); end["cause"] != "completed" {
		t.Errorf("end %v", end)
	}
	if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 1 {
		t.Errorf("ran.log %q, want one line", got)
	}
	if got := f.requests(); got[1] != 1 || got[2] != 1 {
		t.Errorf("requests by turn %v, want each once", got)
	}
	engine(t, "verify", "--data", data) // the turns rebuild from the log as the checkpoint holds them
}

// Without --json, engine agent prints for a person: the model's text, each
// turn's calls and tokens, each step's results, the ticket with the
// commands that answer it (with the connection flags), and the end.
func TestAgentPrintsForAPerson(t *testing.T) {
	addr := freeAddr(t)
	url := "nats://" + addr
	serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1")
	ws := agentWorkspace(t, true)
	f := writeAndRun(t)
	cmd := exec.Command(engineBin, append(append([]string{"agent"}, agentArgs(url, f, "--location", ws, "--on-ask", "exit", "--stream=false")...), "write and run")...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit %v, want 3:\n%s\n%s", err, out, stderr.String())
	}
	for _, want := range []string{"I will write the file and run the command.", "→ call_1_2 bash", "[turn 1: 100 tokens in, 11 out]",
		"step 1 awaits a human:", "engine approve ", " --nats " + url, "engine agent --resume "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("engine agent printed:\n%s", out)
}
