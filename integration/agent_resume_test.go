package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// crashTrial is one kill of engine agent: at a named point of the loop
// (the test-only pause hook, STEPGATE_AGENT_PAUSE), or while it waits for
// bash's ticket.
type crashTrial struct {
	pause    string // point:n; "" for none
	onTicket bool   // killed while it waits for the ticket
	lostTurn int    // the turn whose response was lost with the process (0: none)
}

// The crash-and-resume trials: engine agent is killed (SIGKILL) with bash
// asking — while it waits for the ticket, between the model's answer and
// the request that records it with its step, after the step, before the
// next request, after the last answer is recorded (after-turn) — the
// ticket is approved from another process, and engine agent --resume in
// another process finishes the run. The engine records a turn of calls
// with its step, so the agent's process cannot die between the turn's
// commit and the step's; the engine can, and
// TestAgentResumesAfterTheEngineDiedBetweenTurnAndStep kills it there.
//
// Each turn is sent to the model once, counting by recorded commits: a
// turn is the request whose response the log records (ModelTurnRecorded),
// and no recorded turn is ever sent again. A kill after the model answered
// and before that answer's commit loses the response with the process; its
// request is sent again by the resume, legitimately, and only then: so
// turn k is requested 1 + (k == lostTurn) times, and the log records each
// turn once. Every tool runs once: write's file is there, and bash's
// command appended one line to ran.log.
func TestAgentCrashAndResume(t *testing.T) {
	trials := []crashTrial{
		{onTicket: true},
		{pause: "after-response:1", lostTurn: 1},
		{pause: "after-turn:1"},
		{onTicket: true},
		{pause: "after-turn:1"},
		{pause: "after-step:1"},
		{onTicket: true},
		{pause: "before-request:2"},
		{pause: "after-response:2", lostTurn: 2},
		{onTicket: true},
	}
	addr := freeAddr(t)
	url := "nats://" + addr
	serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1")
	for i, tr := range trials {
		t.Run(fmt.Sprintf("%d-%s%v", i, tr.pause, map[bool]string{true: "ticket"}[tr.onTicket]), func(t *testing.T) {
			ws := agentWorkspace(t, true)
			f := writeAndRun(t)
			mark := filepath.Join(t.TempDir(), "paused")
			var env []string
			if tr.pause != "" {
				env = []string{"STEPGATE_AGENT_PAUSE=" + tr.pause, "STEPGATE_AGENT_PAUSE_FILE=" + mark}
			}
			p := startAgent(t, env, agentArgs(url, f, "--location", ws, "--on-ask", "wait", "write and run")...)
			run := p.await(t, "started")["run"].(string)
			a := &approver{url: url, seen: map[string]bool{}}
			killed := false
			deadline := time.Now().Add(2 * time.Minute) // only to stop a hang
			for !killed {
				if time.Now().After(deadline) {
					t.Fatalf("trial never reached its kill; stderr:\n%s", p.stderr.String())
				}
				if tk := p.find("ticket"); tk != nil {
					if tr.onTicket {
						p.kill9(t)
						killed = true
						a.approve(t, tk)
						break
					}
					a.approve(t, tk)
				}
				if _, err := os.Stat(mark); err == nil {
					p.kill9(t)
					killed = true
					break
				}
				p.wait(20 * time.Millisecond)
			}
			resumeToTheEnd(t, run, a)
			wroteAndRanOnce(t, run, f, ws, tr.lostTurn, a)
		})
	}
}

// approver approves each ticket it is shown once, from another process
// (engine approve against url), and remembers which.
type approver struct {
	url  string
	seen map[string]bool
}

func (a *approver) approve(t *testing.T, ticket map[string]any) {
	t.Helper()
	if id := ticket["ticket"].(string); !a.seen[id] {
		a.seen[id] = true
		engine(t, "approve", id, "--nats", a.url)
	}
}

// resumeToTheEnd runs engine agent --resume run against a's server in a
// process of its own, approving each ticket it prints (a), until it ends;
// it must exit 0.
func resumeToTheEnd(t *testing.T, run string, a *approver) {
	t.Helper()
	q := startAgent(t, nil, "--nats", a.url, "--resume", run)
	deadline := time.Now().Add(2 * time.Minute) // only to stop a hang
	for time.Now().Before(deadline) {
		if tk := q.find("ticket"); tk != nil {
			a.approve(t, tk)
		}
		if q.ended(50 * time.Millisecond) {
			break
		}
	}
	if code := q.exit(t); code != 0 {
		t.Fatalf("resume exit %d\n%s", code, q.stderr.String())
	}
}

// wroteAndRanOnce checks a finished writeAndRun run: completed after 2
// turns and 1 step, turn k requested 1 + (k == lostTurn) times, bash run
// once, out.txt written, and one ticket approved (the step asked once).
func wroteAndRanOnce(t *testing.T, run string, f *chatFake, ws string, lostTurn int, a *approver) {
	t.Helper()
	r := showAgentRun(t, a.url, run)
	if r.End == nil || r.End.Cause != "completed" || len(r.Turns) != 2 || len(r.Steps) != 1 {
		t.Fatalf("run %s: end %+v, %d turns, %d steps; want completed after 2 turns and 1 step", run, r.End, len(r.Turns), len(r.Steps))
	}
	for k := 1; k <= 2; k++ {
		want := 1
		if k == lostTurn {
			want = 2
		}
		if got := f.requests()[k]; got != want {
			t.Errorf("turn %d requested %d times, want %d", k, got, want)
		}
	}
	if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 1 {
		t.Errorf("bash ran %d times (ran.log %q), want once", len(got), got)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "hello from the model\n" {
		t.Errorf("out.txt %q", b)
	}
	if len(a.seen) != 1 {
		t.Errorf("%d tickets approved, want 1 (the step asked once)", len(a.seen))
	}
}

// The engine dies between a turn's commit and its step's: engine serve is
// killed (SIGKILL) where the step's turn is in the log and nothing of the
// step is, and the agent with it. Served again on its data directory, the
// run has the turn and no step; engine agent --resume, another process,
// submits the step, waits for its ticket (approved from a third), and
// finishes the run. No turn was sent to the model twice, and every tool
// ran once.
func TestAgentResumesAfterTheEngineDiedBetweenTurnAndStep(t *testing.T) {
	data, addr := t.TempDir(), freeAddr(t)
	url := "nats://" + addr
	mark := filepath.Join(t.TempDir(), "paused")
	s := serveEnv(t, []string{"STEPGATE_HOST_PAUSE=turn-landed:1", "STEPGATE_HOST_PAUSE_FILE=" + mark}, "--data", data, "--listen", addr, "--host", "h1")
	ws := agentWorkspace(t, true)
	f := writeAndRun(t)
	p := startAgent(t, nil, agentArgs(url, f, "--location", ws, "--on-ask", "wait", "write and run")...)
	run := p.await(t, "started")["run"].(string)
	deadline := time.Now().Add(2 * time.Minute) // only to stop a hang
	for {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the engine never reached turn-landed; its stderr:\n%s", s.stderr.String())
		}
		p.wait(20 * time.Millisecond)
	}
	p.kill9(t)
	s.kill9(t)

	serveArgs(t, "--data", data, "--listen", addr, "--host", "h1")
	if r := showAgentRun(t, url, run); len(r.Turns) != 1 || len(r.Steps) != 0 {
		t.Fatalf("after the engine died: %d turns and %d steps, want the turn alone", len(r.Turns), len(r.Steps))
	}
	a := &approver{url: url, seen: map[string]bool{}}
	resumeToTheEnd(t, run, a)
	wroteAndRanOnce(t, run, f, ws, 0, a)
}
