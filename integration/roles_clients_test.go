package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/internal/syncbuf"
	"github.com/stepgate/stepgate/projection"
)

// shippedRoles is an `engine serve` process whose embedded server enforces
// deploy/access/accounts.conf, and each role's login for the engine's
// client verbs.
type shippedRoles struct {
	url   string
	login map[string][]string // role → --nats, --user, --password-file, --inbox-prefix
}

func serveShippedRoles(t *testing.T) shippedRoles {
	t.Helper()
	passwords := map[string]string{"engine": "engine-pw-5", "agent": "agent-pw-6", "approver": "approver-pw-7", "operator": "operator-pw-8"}
	for role, pw := range passwords {
		t.Setenv("STEPGATE_"+strings.ToUpper(role)+"_PASSWORD", pw)
	}
	access, err := filepath.Abs(filepath.Join("..", "deploy", "access", "accounts.conf"))
	if err != nil {
		t.Fatal(err)
	}
	pwDir, addr := t.TempDir(), freeAddr(t)
	r := shippedRoles{url: "nats://" + addr, login: map[string][]string{}}
	serveArgs(t, append([]string{"--data", t.TempDir(), "--listen", addr, "--host", "roles", "--auth", access},
		roleLogin(t, pwDir, "engine", passwords["engine"])...)...)
	for role, pw := range passwords {
		r.login[role] = append([]string{"--nats", r.url}, roleLogin(t, pwDir, role, pw)...)
	}
	return r
}

// as runs a client verb as role to its end: its exit status, stdout and
// stderr.
func (r shippedRoles) as(t *testing.T, role string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(engineBin, append(args, r.login[role]...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code := exitOf(t, cmd, "engine "+strings.Join(args, " ")+" as "+role)
	return code, stdout.String(), stderr.String()
}

// ok is as, failing the test unless the verb exits 0.
func (r shippedRoles) ok(t *testing.T, role string, args ...string) string {
	t.Helper()
	code, out, errOut := r.as(t, role, args...)
	if code != 0 {
		t.Fatalf("engine %s as %s: exit %d\n%s%s", strings.Join(args, " "), role, code, out, errOut)
	}
	if strings.Contains(errOut, "permission") {
		t.Errorf("engine %s as %s asked for what its role may not:\n%s", strings.Join(args, " "), role, errOut)
	}
	return out
}

// ticketOf waits, as the approver, for the one open ticket of run.
func (r shippedRoles) ticketOf(t *testing.T, run string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var page sgclient.TicketPage
		if err := json.Unmarshal([]byte(r.ok(t, "approver", "tickets", "--run", run, "--json")), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Tickets) == 1 {
			return page.Tickets[0].ID
		}
	}
	t.Fatalf("run %s: no ticket within a minute", run)
	return ""
}

// Every documented client verb works with its documented role of
// deploy/access/accounts.conf, on the embedded server: the agent runs a
// script that waits for a confirmation, shows and ends runs; the approver
// lists, approves and rejects tickets, lists runs and shows them. Each
// role's verbs outside it are refused with permission_denied (exit 77)
// naming the subject and the user, and change nothing. (The MCP gateway
// as the agent role: TestMCPServeAsTheAgentRole.)
func TestShippedClientsWithTheirRoles(t *testing.T) {
	r := serveShippedRoles(t)
	dir, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "ask.jsonl")
	if err := os.WriteFile(script, []byte(`{"calls":[{"id":"c1","tool":"read","args":{"path":".env"}}]}
{"calls":[{"id":"c2","tool":"glob","args":{"pattern":"*"}}]}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	// The agent's run waits for the approver.
	run := exec.Command(engineBin, append([]string{"run", "--script", script, "--location", ws, "--wait", "--json"}, r.login["agent"]...)...)
	var runOut syncbuf.Buffer
	var runErr bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var runID string
	for deadline := time.Now().Add(time.Minute); runID == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		first, _, _ := strings.Cut(runOut.String(), "\n")
		var started struct{ Run string }
		if json.Unmarshal([]byte(first), &started) == nil {
			runID = started.Run
		}
	}
	if runID == "" {
		t.Fatalf("engine run as agent printed no start: %s%s", runOut.String(), runErr.String())
	}
	ticket := r.ticketOf(t, runID)
	if out := r.ok(t, "approver", "approve", ticket); !strings.Contains(out, "ticket "+ticket+" approved") {
		t.Fatalf("approve as approver: %s", out)
	}
	if code := exitOf(t, run, "engine run --wait as agent"); code != 0 {
		t.Fatalf("engine run --wait as agent: exit %d\n%s%s", code, runOut.String(), runErr.String())
	}
	if strings.Contains(runErr.String(), "permission") {
		t.Errorf("engine run as agent asked for what its role may not:\n%s", runErr.String())
	}
	for _, role := range []string{"agent", "approver"} {
		var shown projection.Run
		if err := json.Unmarshal([]byte(r.ok(t, role, "show", runID, "--json")), &shown); err != nil {
			t.Fatal(err)
		}
		if len(shown.Steps) != 2 || shown.Steps[0].Calls[0].Result == nil || !strings.Contains(shown.Steps[0].Calls[0].Result.Parts[0].Text, "SECRET=1") {
			t.Errorf("show as %s: %d steps, want 2, the first with the approved read's result: %+v", role, len(shown.Steps), shown.Steps)
		}
	}
	if out := r.ok(t, "approver", "runs"); !strings.Contains(out, runID) {
		t.Errorf("runs as approver does not list %s:\n%s", runID, out)
	}

	// A second run: the approver rejects with feedback, the agent ends it.
	out := r.ok(t, "agent", "run", "--script", script, "--location", ws)
	run2 := strings.Fields(out)[1]
	ticket2 := r.ticketOf(t, run2)
	if out := r.ok(t, "approver", "reject", ticket2, "-m", "not the secrets"); !strings.Contains(out, ticket2) {
		t.Errorf("reject as approver: %s", out)
	}
	if out := r.ok(t, "agent", "end", run2, "--reason", "done with it"); !strings.Contains(out, "run "+run2+" ended") {
		t.Errorf("end as agent: %s", out)
	}

	// Outside the role: refused at once, by name, nothing changed.
	refusals := []struct {
		role, subject string
		args          []string
	}{
		{"agent", "stepgate.tickets", []string{"tickets"}},
		{"agent", "stepgate.tickets", []string{"approve", ticket2}}, // approve reads the ticket first
		{"approver", "stepgate.start_run", []string{"run", "--script", script, "--location", ws}},
		{"approver", "stepgate.end_run", []string{"end", runID}},
	}
	for _, c := range refusals {
		code, _, errOut := r.as(t, c.role, c.args...)
		if code != 77 || !strings.Contains(errOut, "permission_denied") || !strings.Contains(errOut, `user "`+c.role+`" may not publish to `+c.subject) {
			t.Errorf("engine %s as %s: exit %d, want 77 and permission_denied naming %s and the user:\n%s", strings.Join(c.args, " "), c.role, code, c.subject, errOut)
		}
	}
	if out := r.ok(t, "approver", "runs"); strings.Count(out, "\n") != 2 {
		t.Errorf("after the refusals, runs lists other than the two runs:\n%s", out)
	}
}

// engine agent as the shipped agent role: the loop records its turns and
// submits its steps with what the role may ask, stops at the ticket
// (--on-ask exit), the approver approves it, and engine agent --resume, as
// the agent again, finishes the run; no request of the loop was refused.
func TestAgentAsTheAgentRole(t *testing.T) {
	r := serveShippedRoles(t)
	ws := agentWorkspace(t, true)
	f := writeAndRun(t)
	agent := r.login["agent"][2:] // agentArgs gives --nats
	p := startAgent(t, nil, append(agentArgs(r.url, f, "--location", ws, "--on-ask", "exit", "write and run"), agent...)...)
	if code := p.exit(t); code != 3 {
		t.Fatalf("engine agent as agent: exit %d, want 3 (awaiting)\n%s", code, p.stderr.String())
	}
	tk := p.await(t, "ticket")
	if tk == nil {
		t.Fatalf("no ticket:\n%s", p.stderr.String())
	}
	r.ok(t, "approver", "approve", tk["ticket"].(string))
	q := startAgent(t, nil, append([]string{"--nats", r.url, "--resume", tk["run"].(string)}, agent...)...)
	if code := q.exit(t); code != 0 {
		t.Fatalf("engine agent --resume as agent: exit %d\n%s", code, q.stderr.String())
	}
	for _, out := range []string{p.stderr.String(), q.stderr.String()} {
		if strings.Contains(out, "permission") {
			t.Errorf("the agent asked for what its role may not:\n%s", out)
		}
	}
	if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 1 {
		t.Errorf("the approved command ran %d times, want once", len(got))
	}
}
