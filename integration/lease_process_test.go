package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// submitAsync sends a step nobody waits for the answer of.
func submitAsync(t *testing.T, nc *nats.Conn, run string, calls ...commands.CallRequest) {
	t.Helper()
	b, _ := json.Marshal(commands.SubmitStepRequest{Run: run, Step: 1, Calls: calls})
	if err := nc.PublishRequest("stepgate.submit_step", nats.NewInbox(), b); err != nil {
		t.Fatal(err)
	}
}

// waitCall is a call of wait_fx or wait on the gate file that marks its
// start in the marks file.
func waitCall(id, tool, text string) commands.CallRequest {
	b, _ := json.Marshal(map[string]string{"text": text, "path": "gate", "mark": "marks"})
	return commands.CallRequest{ID: id, Tool: tool, Args: b}
}

// started waits until step 1 of run has its pre-effect commit and returns
// the host that made it.
func started(t *testing.T, nc *nats.Conn, run string) string {
	t.Helper()
	var host string
	until(t, "pre-effect commit of "+run, func() bool {
		r := showRun(t, nc, run)
		if len(r.Steps) == 1 && r.Steps[0].Calls[0].Attempts == 1 {
			host = r.Steps[0].Host
			return true
		}
		return false
	})
	return host
}

// A host paused (SIGSTOP) in the middle of a side-effecting call loses its
// lease: the other host takes it over a second later and settles the call
// as indeterminate. Resumed (SIGCONT), the paused host finishes the call —
// it had started, once — and its result is refused; no message is
// quarantined; the call's effect happened once. The resumed host holds its
// lease again and goes on serving other runs.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestLeaseTakeoverOfAPausedHost(t *testing.T) {
	url, nc := natsServer(t)
	hosts := map[string]*leased{"a": serveLeased(t, url, "a"), "b": serveLeased(t, url, "b")}
	ws := t.TempDir()
	gate := filepath.Join(ws, "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info := must(query[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	submitAsync(t, nc, info.Run, waitCall("fx", "wait_fx", "paused fx"))
	name := started(t, nc, info.Run)
	paused, other := hosts[name], hosts[map[string]string{"a": "b", "b": "a"}[name]]
	until(t, "the call's start", func() bool { return lines(t, ws, "marks")["paused fx"] == 1 })
	if err := paused.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var st projection.Step
	until(t, "the takeover's settle", func() bool { st = showRun(t, nc, info.Run).Steps[0]; return st.Final })
	t.Logf("host %s paused; %s settled its step %s later", paused.name, other.name, time.Since(stopped).Round(10*time.Millisecond))
	if c := st.Calls[0]; c.Result.Parts[0].Text != commands.IndeterminateResult || c.Attempts != 1 || st.Host != other.name {
		t.Fatalf("step 1 after the takeover: %+v (host %s), want indeterminate, started once, by %s", c, st.Host, other.name)
	}
	if rec := leaseRecord(t, nc, paused.name); rec.By != other.name || rec.State != step.LeaseSettled || rec.Steps != 1 {
		t.Errorf("%s's lease record %+v, want settled by %s, 1 step", paused.name, rec.Lease, other.name)
	}
	if got := metric(t, other.metrics, "stepgate_lease_takeovers_total"); got != 1 {
		t.Errorf("%s counted %v takeovers, want 1", other.name, got)
	}

	// Resumed: the call returns, its result comes after the takeover's.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if err := paused.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	until(t, "the resumed host's refused settle", func() bool {
		return metric(t, paused.metrics, "stepgate_commit_conflicts_total", "kind", "settle") >= 1
	})
	until(t, "the resumed host's lease", func() bool { return metric(t, paused.metrics, "stepgate_lease_held") == 1 })
	st = showRun(t, nc, info.Run).Steps[0]
	if c := st.Calls[0]; c.Result.Parts[0].Text != commands.IndeterminateResult || c.Attempts != 1 {
		t.Errorf("step 1 after the resume: %+v, want still indeterminate, started once", c)
	}
	for _, h := range hosts {
		if q := metric(t, h.metrics, "stepgate_quarantined_messages_total"); q != 0 {
			t.Errorf("%s quarantined %v messages: a result was committed after the takeover's", h.name, q)
		}
	}
	if n := lines(t, ws, "marks")["paused fx"]; n != 1 {
		t.Errorf("the paused call ran %d times, want once", n)
	}
	if rec := leaseRecord(t, nc, paused.name); rec.By != paused.name || rec.State != step.LeaseHeld {
		t.Errorf("%s's lease record after the resume %+v, want held by itself", paused.name, rec.Lease)
	}

	// The resumed host serves other runs: steps land on it again.
	served := 0
	for i := 0; i < 40 && served < 2; i++ {
		r := must(query[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
		b, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("after %d", i), "path": "effects"})
		out, err := query[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: r.Run, Step: 1,
			Calls: []commands.CallRequest{{ID: "c1", Tool: "append_fx", Args: b}}})
		if err != nil || !out.Final || out.Results[0].Content != fmt.Sprintf("after %d", i) {
			t.Fatalf("run %d after the resume: %+v, %v", i, out, err)
		}
		if showRun(t, nc, r.Run).Steps[0].Host == paused.name {
			served++
		}
	}
	if served < 2 {
		t.Errorf("the resumed host served %d of the steps after it came back, want some", served)
	}
}

// A host SIGKILLed with steps in doubt and never restarted: a second after
// its lease's last renewal the other host takes it over and settles them as
// its restart would — the side-effecting call indeterminate, never started
// again; the read-only call run again — with no `engine recover`. The other
// host's own steps finish as usual, and no call's effect happened twice.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestSIGKILLedHostIsTakenOverWithoutRestart(t *testing.T) {
	url, nc := natsServer(t)
	hosts := map[string]*leased{"a": serveLeased(t, url, "a"), "b": serveLeased(t, url, "b")}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "gate"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const runs = 6
	on := map[string][]string{}
	for i := range runs {
		info := must(query[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
		submitAsync(t, nc, info.Run, waitCall("fx", "wait_fx", fmt.Sprintf("fx %d", i)), waitCall("ro", "wait", fmt.Sprintf("ro %d", i)))
		h := started(t, nc, info.Run)
		on[h] = append(on[h], info.Run)
	}
	victim := "a"
	if len(on["b"]) > len(on["a"]) {
		victim = "b"
	}
	survivor := map[string]string{"a": "b", "b": "a"}[victim]
	hosts[victim].kill9(t)
	killed := time.Now()
	if err := os.Remove(filepath.Join(ws, "gate")); err != nil {
		t.Fatal(err)
	}
	for h, rs := range on {
		for _, run := range rs {
			var st projection.Step
			until(t, "step 1 of "+run+" final", func() bool { st = showRun(t, nc, run).Steps[0]; return st.Final })
			fx, ro := st.Calls[0], st.Calls[1]
			if h == survivor {
				if fx.Result.Parts[0].Text == commands.IndeterminateResult || fx.Attempts != 1 {
					t.Errorf("survivor's run %s: %+v, want its own result", run, fx)
				}
				continue
			}
			if fx.Result.Parts[0].Text != commands.IndeterminateResult || fx.Attempts != 1 || st.Host != survivor {
				t.Errorf("killed host's run %s: %+v (host %s), want indeterminate, started once, settled by %s", run, fx, st.Host, survivor)
			}
			if ro.Result == nil || ro.Result.IsError || ro.Attempts != 1 {
				t.Errorf("killed host's run %s, read-only call: %+v, want run again", run, ro)
			}
		}
	}
	t.Logf("host %s killed with %d steps in doubt (%s had %d): all settled %s later", victim, len(on[victim]), survivor, len(on[survivor]),
		time.Since(killed).Round(10*time.Millisecond))
	marks := lines(t, ws, "marks")
	for i := range runs {
		if n := marks[fmt.Sprintf("fx %d", i)]; n != 1 {
			t.Errorf("fx %d started %d times, want once", i, n)
		}
	}
	if rec := leaseRecord(t, nc, victim); rec.By != survivor || rec.State != step.LeaseSettled || rec.Steps != len(on[victim]) {
		t.Errorf("%s's lease record %+v, want settled by %s, %d steps", victim, rec.Lease, survivor, len(on[victim]))
	}
}
