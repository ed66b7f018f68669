package commands_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/executor/sandbox/sandboxtest"
	"github.com/stepgate/stepgate/step/steptest"
)

// canSandbox skips a test on a host that cannot sandbox.
func canSandbox(t testing.TB) {
	t.Helper()
	if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
		t.Skipf("this host cannot sandbox: %+v", h)
	}
}

// outsideDir is a directory outside the location that a sandboxed command
// sees read-only.
func outsideDir(t *testing.T) string { return sandboxtest.VisibleDir(t, "outside-") }

// resultSandbox is the sandbox record of call i of step n of run.
func resultSandbox(t *testing.T, h *commands.Host, run string, n, i int) *events.SandboxRecord {
	t.Helper()
	shown, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	st := shown.Step(n)
	if st == nil || len(st.Calls) <= i || st.Calls[i].Result == nil {
		t.Fatalf("step %d of %s has no result for call %d: %+v", n, run, i, st)
	}
	return st.Calls[i].Result.Sandbox
}

// A call the sandbox refused says so in one line after its result, and
// its result's sandbox record says what: a bash write outside the location
// (read from the command's output), a file tool's write outside (its own
// refusal, exact), a connection the proxy refused (exact, from its
// record), and a command that found no network.
func TestSandboxRefusalIsSaidPlainly(t *testing.T) {
	canSandbox(t)
	s := steptest.Start(t, "")
	ww := config.SandboxProfile{Mode: config.SandboxWorkspaceWrite}
	h := sandboxHost(t, s, ww, config.SandboxProfile{})
	loc, outside := t.TempDir(), outsideDir(t)
	run := startIn(t, h, loc, "")
	escaped := filepath.Join(outside, "escaped")

	out := submit(t, h, run, 1, call("b", "bash", builtin.BashInput{Command: "echo out > " + escaped}))
	text := out.Results[0].Content
	if !strings.Contains(text, "[sandbox: the command failed and its output says a file operation was not permitted, likely by the sandbox: ") ||
		!strings.Contains(text, escaped) || !strings.Contains(text, "the call runs under workspace-write") {
		t.Errorf("bash's result does not say the sandbox refused the write:\n%s", text)
	}
	if rec := resultSandbox(t, h, run, 1, 0); rec == nil || rec.Refused == nil || rec.Refused.Kind != events.RefusedFilesystem || !rec.Refused.Heuristic {
		t.Errorf("bash's sandbox record %+v, want a heuristic filesystem refusal", rec)
	}

	out = submit(t, h, run, 2, call("w", "write", builtin.WriteInput{Path: escaped, Content: "x"}))
	text = out.Results[0].Content
	if !strings.Contains(text, "[sandbox: the sandbox refused writing "+escaped+" (outside the location and the writable roots); the call runs under workspace-write") {
		t.Errorf("write's result does not say the sandbox refused it:\n%s", text)
	}
	if rec := resultSandbox(t, h, run, 2, 0); rec == nil || rec.Refused == nil || rec.Refused.Kind != events.RefusedWrite || rec.Refused.Heuristic || rec.Mode != "workspace-write" {
		t.Errorf("write's sandbox record %+v, want an exact write refusal under workspace-write", rec)
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Fatal("a refused write happened")
	}

	// A call the sandbox refused nothing says nothing of it.
	out = submit(t, h, run, 3, call("ok", "bash", builtin.BashInput{Command: "echo fine > inside.txt; ls /nonexistent || true"}))
	if strings.Contains(out.Results[0].Content, "[sandbox:") {
		t.Errorf("an unrefused call's result speaks of the sandbox:\n%s", out.Results[0].Content)
	}

	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: apt-get install -y curl")
	}
	out = submit(t, h, run, 4, call("n", "bash", builtin.BashInput{Command: "curl -sS http://no-network.example/"}))
	if text := out.Results[0].Content; !strings.Contains(text, "[sandbox: the command failed without a network; its output says ") || !strings.Contains(text, "no network)") {
		t.Errorf("curl without a network: the result does not say so:\n%s", text)
	}
	unlisted := listen(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	px := sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Network: config.NetworkProxy, Allow: []string{"localhost:1"}}, config.SandboxProfile{})
	prun := startIn(t, px, t.TempDir(), "")
	out = submit(t, px, prun, 1, call("p", "bash", builtin.BashInput{Command: "curl -s -o /dev/null -w '%{http_code}\\n' http://localhost:" + unlisted.port() + "/"}))
	if text := out.Results[0].Content; !strings.Contains(text, "[sandbox: the sandbox's proxy refused the connection to localhost:"+unlisted.port()+" (not_allowed") ||
		!strings.Contains(text, "the network only to localhost:1") {
		t.Errorf("a connection the proxy refused: the result does not say so:\n%s", text)
	}
	if rec := resultSandbox(t, px, prun, 1, 0); rec == nil || rec.Refused == nil || rec.Refused.Kind != events.RefusedNetwork || rec.Refused.Heuristic {
		t.Errorf("the proxy's refusal recorded as %+v, want an exact network refusal", rec)
	}
}

// Under escalate: ask, a bash call the sandbox refused asks, on a ticket
// saying what was refused and holding the sandboxed attempt, to run outside
// the sandbox; the ticket is in the log, so it survives the host's
// restart. Approved (after the restart), the call runs
// again outside: the write happens, and the result records profile off,
// escalated by the ticket. Rejected, the model reads the refused attempt
// and the rejection's message, and the write never happens.
func TestEscalationAsksToRunOutsideTheSandbox(t *testing.T) {
	canSandbox(t)
	s := steptest.Start(t, "")
	for _, approve := range []bool{true, false} {
		h := sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Escalate: config.EscalateAsk}, config.SandboxProfile{})
		loc, outside := t.TempDir(), outsideDir(t)
		escaped := filepath.Join(outside, "escaped")
		run := startIn(t, h, loc, "")
		out := submit(t, h, run, 1, call("b", "bash", builtin.BashInput{Command: "echo attempt >> " + filepath.Join(loc, "attempts") + "; echo out > " + escaped}))
		if out.Final || len(out.Tickets) != 1 {
			t.Fatalf("approve %v: outcome %+v, want the step awaiting one ticket", approve, out)
		}
		tk := out.Tickets[0]
		if tk.Kind != events.TicketEscalation || tk.Escalation == nil ||
			!strings.Contains(tk.Reason, "the sandbox refused the call: the command failed, its output saying ") ||
			!strings.Contains(tk.Reason, "approving runs the call again outside the sandbox") {
			t.Fatalf("ticket %+v (reason %q), want an escalation saying what was refused", tk.TicketIssued, tk.Reason)
		}
		if a := tk.Escalation.Attempt; len(a.Parts) == 0 || !strings.Contains(a.Parts[len(a.Parts)-1].Text, "[sandbox: the command failed") {
			t.Errorf("the ticket's attempt %+v, want the refused result", a)
		}
		if _, err := os.Stat(escaped); err == nil {
			t.Fatal("the sandboxed attempt wrote outside")
		}
		// The host stops and starts again (a new state directory: all it
		// knows of the ticket is in the log).
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		h = sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Escalate: config.EscalateAsk}, config.SandboxProfile{})
		listed, err := tickets(ctxT(t), h, commands.TicketsRequest{Run: run})
		if err != nil || len(listed) != 1 || listed[0].ID != tk.ID || listed[0].Reason != tk.Reason || listed[0].Escalation == nil {
			t.Fatalf("after a restart the host lists %+v, %v; want the escalation ticket with its reason", listed, err)
		}
		if _, err := h.Reply(ctxT(t), commands.ReplyRequest{Ticket: tk.ID, Reply: events.ReplyAlways, Principal: "ops"}); commands.Code(err) != commands.CodeTicketKind {
			t.Errorf("always on an escalation ticket: %v, want %s", err, commands.CodeTicketKind)
		}
		reply := commands.ReplyRequest{Ticket: tk.ID, Reply: events.ReplyOnce, Principal: "ops"}
		if !approve {
			reply.Reply, reply.Message = events.ReplyReject, "keep it in the workspace"
		}
		res, err := h.Reply(ctxT(t), reply)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome == nil || !res.Outcome.Final {
			t.Fatalf("approve %v: reply %+v, want the step final", approve, res)
		}
		text := res.Outcome.Results[0].Content
		_, statErr := os.Stat(escaped)
		rec := resultSandbox(t, h, run, 1, 0)
		if approve {
			if statErr != nil || !strings.Contains(text, commands.EscalatedNote) {
				t.Errorf("approved: the write outside %v, result %q; want it written and the note", statErr, text)
			}
			if rec == nil || rec.Mode != "off" || rec.Escalated != tk.ID || rec.Refused != nil {
				t.Errorf("approved: the result records %+v, want profile off escalated by %s", rec, tk.ID)
			}
		} else {
			if statErr == nil || !strings.Contains(text, "[sandbox: the command failed") || !strings.Contains(text, commands.EscalationRejected+": keep it in the workspace") {
				t.Errorf("rejected: the write outside %v, result %q; want no write, the refused attempt and the message", statErr, text)
			}
			if rec == nil || rec.Mode != "workspace-write" || rec.Refused == nil || rec.Escalated != "" {
				t.Errorf("rejected: the result records %+v, want the sandboxed attempt's record", rec)
			}
			if r, _ := h.Show(ctxT(t), commands.ShowRequest{Run: run}); r.End != nil {
				t.Errorf("a rejected escalation ended the run: %+v", r.End)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(loc, "attempts")); strings.Count(string(b), "attempt") != map[bool]int{true: 2, false: 1}[approve] {
			t.Errorf("approve %v: the command ran %d times, want once sandboxed (and once outside when approved)", approve, strings.Count(string(b), "attempt"))
		}
	}
}

// Crash at the worst moment: the escalation was approved and the call
// started outside the sandbox, and the host stopped before its result.
// Recovery settles the call as indeterminate and never runs it again —
// not outside the sandbox, and not in it, asking again — even for a
// read-only tool, which recovery otherwise runs again.
func TestEscalatedCallIsNeverRunAgainByRecovery(t *testing.T) {
	canSandbox(t)
	s := steptest.Start(t, "")
	secrets := t.TempDir()
	if err := os.WriteFile(filepath.Join(secrets, "key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Escalate: config.EscalateAsk, Denied: []string{secrets}}, config.SandboxProfile{})
	run := startIn(t, h, t.TempDir(), "")
	out := submit(t, h, run, 1, call("r", "read", builtin.ReadInput{Path: filepath.Join(secrets, "key")}))
	if len(out.Tickets) != 1 || out.Tickets[0].Kind != events.TicketEscalation || !strings.Contains(out.Tickets[0].Reason, "reading "+filepath.Join(secrets, "key")+" (denied path") {
		t.Fatalf("outcome %+v, want an escalation ticket for the denied read", out)
	}
	tk := out.Tickets[0]
	// What the approval commits before the call runs outside, and nothing after.
	last, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	approved := events.Commit{ID: events.NewIDSource(nil).New(time.Now()), Run: run, Step: 1, Kind: events.KindResolve, At: time.Now().UTC(),
		Host: last.Steps[0].Host, Prev: last.LastCommit, Events: []events.Event{
			events.TicketResolved{Ticket: tk.ID, CallID: "r", Reply: events.ReplyOnce, Approved: true, Principal: "ops"}}}
	if _, err := h.Log.Commit(ctxT(t), &approved, last.LastSeq); err != nil {
		t.Fatal(err)
	}
	syncNow(t, h)
	if err := h.Recover(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	r, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	st := r.Step(1)
	if !st.Final || st.Calls[0].Result == nil || st.Calls[0].Result.Parts[0].Text != commands.IndeterminateResult || len(r.Tickets) != 1 {
		t.Errorf("after recovery: step %+v, %d tickets; want it final, the call indeterminate, no new ticket", st, len(r.Tickets))
	}
	// Without the crash, the approved read runs outside the sandbox.
	out = submit(t, h, run, 2, call("r", "read", builtin.ReadInput{Path: filepath.Join(secrets, "key")}))
	if len(out.Tickets) != 1 {
		t.Fatalf("outcome %+v, want an escalation ticket", out)
	}
	res, err := h.Reply(ctxT(t), commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome == nil || res.Outcome.Results[0].IsError || !strings.Contains(res.Outcome.Results[0].Content, commands.EscalatedNote) {
		t.Errorf("the approved read: %+v, want the file's content outside the sandbox", res.Outcome)
	}
}

// No file escapes the operator's floor: on a host started with --sandbox,
// a refused call of a run whose profile says escalate: ask does not ask;
// its refusal is its result.
func TestEscalationNeverEscapesTheHostsFloor(t *testing.T) {
	canSandbox(t)
	s := steptest.Start(t, "")
	ww := config.SandboxProfile{Mode: config.SandboxWorkspaceWrite}
	h := sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Escalate: config.EscalateAsk}, ww)
	escaped := filepath.Join(outsideDir(t), "escaped")
	out := submit(t, h, startIn(t, h, t.TempDir(), ""), 1, call("b", "bash", builtin.BashInput{Command: "echo out > " + escaped}))
	if !out.Final || len(out.Tickets) != 0 || !strings.Contains(out.Results[0].Content, "[sandbox: the command failed") {
		t.Errorf("outcome %+v, want the refused result and no ticket", out)
	}
	if _, err := os.Stat(escaped); err == nil {
		t.Error("the write outside happened")
	}
}
