package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// serveArgs starts `engine serve` with extra flags.
func serveArgs(t *testing.T, extra ...string) *server {
	t.Helper()
	return serveEnv(t, nil, extra...)
}

func (s *server) kill9(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
}

// call asks the stepgate service over NATS.
func ask[T any](t *testing.T, nc *nats.Conn, endpoint string, req any) (*T, error) {
	t.Helper()
	b, _ := json.Marshal(req)
	msg, err := nc.Request("stepgate."+endpoint, b, 30*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", endpoint, err)
	}
	return answerOf[T](t, endpoint, msg)
}

// answerOf decodes the service's answer to endpoint: its service error as a
// *commands.Error, or the result.
func answerOf[T any](t *testing.T, endpoint string, msg *nats.Msg) (*T, error) {
	t.Helper()
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return nil, &commands.Error{Code: code, Message: msg.Header.Get(micro.ErrorHeader)}
	}
	var out T
	if err := json.Unmarshal(msg.Data, &out); err != nil {
		t.Fatalf("%s: %v", endpoint, err)
	}
	return &out, nil
}

func must[T any](v *T, err error) *T {
	if err != nil {
		panic(err)
	}
	return v
}

// inDoubt is an engine process killed with SIGKILL while the calls of a
// step run — after their pre-effect commit, before their results: a
// side-effecting call (so the step has a pre-effect commit) and a read-only
// one. The tools would return at once by now.
type inDoubt struct {
	data, addr, run string
	nc              *nats.Conn
}

func killInDoubt(t *testing.T, host string) inDoubt {
	t.Helper()
	d := inDoubt{data: t.TempDir(), addr: freeAddr(t)}
	ws := t.TempDir()
	gate := filepath.Join(ws, "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serveArgs(t, "--data", d.data, "--listen", d.addr, "--host", host, "--test-tools")
	nc, err := nats.Connect("nats://"+d.addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	d.nc = nc
	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	d.run = info.Run
	b, _ := json.Marshal(commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
		{ID: "fx", Tool: "wait_fx", Args: json.RawMessage(`{"text":"done by wait_fx","path":"gate"}`)},
		{ID: "ro", Tool: "wait", Args: json.RawMessage(`{"text":"done by wait","path":"gate"}`)}}})
	// Nobody waits for the step's answer: the engine dies first.
	if err := nc.PublishRequest("stepgate.submit_step", nats.NewInbox(), b); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: info.Run})
		if err == nil && len(r.Steps) == 1 && r.Steps[0].Calls[0].Attempts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the step never reached its pre-effect commit")
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.kill9(t)
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	return d
}

// serve starts an engine process on the killed one's data and address.
func (d inDoubt) serve(t *testing.T, host string, extra ...string) *server {
	t.Helper()
	srv := serveArgs(t, append([]string{"--data", d.data, "--listen", d.addr, "--host", host, "--test-tools"}, extra...)...)
	t.Cleanup(func() { _ = srv.cmd.Process.Signal(syscall.SIGTERM) })
	return srv
}

// step1 returns the run's first step as the engine shows it.
func (d inDoubt) step1(t *testing.T) projection.Step {
	t.Helper()
	return must(ask[projection.Run](t, d.nc, "show", commands.ShowRequest{Run: d.run})).Steps[0]
}

// checkRecovered checks that the step in doubt was settled as recovery
// settles it: the side-effecting call indeterminate and never started
// again, the read-only call run once more.
func checkRecovered(t *testing.T, s projection.Step) {
	t.Helper()
	if !s.Final || s.Calls[0].Result == nil || s.Calls[1].Result == nil {
		t.Fatalf("step 1 after recovery: %+v, want final with both results", s)
	}
	fx, ro := s.Calls[0], s.Calls[1]
	if got := fx.Result.Parts[0].Text; got != commands.IndeterminateResult {
		t.Errorf("side-effecting call in doubt settles as %q, want %q", got, commands.IndeterminateResult)
	}
	if fx.Attempts != 1 {
		t.Errorf("side-effecting call started %d times, want 1 (never again)", fx.Attempts)
	}
	if got := ro.Result.Parts[0].Text; got != "done by wait" {
		t.Errorf("read-only call in doubt settles as %q, want it run again", got)
	}
	if ro.Attempts != 1 {
		t.Errorf("read-only call: %d recorded starts, want the one recovery run", ro.Attempts)
	}
}

// Restarted under the same host name, the killed engine never runs the
// side-effecting call again (indeterminate) and runs the read-only one once
// more.
func TestSIGKILLBetweenStartAndResult(t *testing.T) {
	d := killInDoubt(t, "proc")
	d.serve(t, "proc")
	checkRecovered(t, d.step1(t))
}

// A host that never comes back: another host leaves its step alone on start
// (it cannot tell a crashed host from a slow one) until the gone host's
// lease expires — here not within the test (--lease 1m) — or an operator
// who does not want to wait runs `engine recover HOST`, which settles it as
// that host's restart would.
func TestRecoverAHostThatIsGone(t *testing.T) {
	d := killInDoubt(t, "gone")
	d.serve(t, "other", "--lease", "1m")
	if s := d.step1(t); s.Final || s.Calls[0].Result != nil || s.Calls[1].Result != nil {
		t.Fatalf("another host settled the gone host's step on its own start: %+v", s)
	}
	out, err := exec.Command(engineBin, "recover", "gone", "--nats", "nats://"+d.addr).CombinedOutput()
	if err != nil {
		t.Fatalf("engine recover: %v\n%s", err, out)
	}
	if want := "settled 1 steps left open by gone\n  " + d.run + " step 1\n"; string(out) != want {
		t.Errorf("engine recover printed %q, want %q", out, want)
	}
	checkRecovered(t, d.step1(t))
	out, err = exec.Command(engineBin, "recover", "gone", "--nats", "nats://"+d.addr).CombinedOutput()
	if err != nil || string(out) != "settled 0 steps left open by gone\n" {
		t.Errorf("recovering the same host again: %q, %v; want nothing to settle", out, err)
	}
}

// Two engine processes serve one NATS server; the same reply reaches the
// service twice at once, 100 times over: each call runs exactly once.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestSameReplyOnTwoEngineProcesses(t *testing.T) {
	ws := t.TempDir()
	addr := freeAddr(t)
	a := serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "a", "--test-tools")
	b := serveArgs(t, "--nats", "nats://"+addr, "--data", t.TempDir(), "--host", "b", "--test-tools")
	defer a.cmd.Process.Signal(syscall.SIGTERM)
	defer b.cmd.Process.Signal(syscall.SIGTERM)
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const trials = 100
	rules := []map[string]string{{"action": "append_fx", "resource": "ask *", "effect": "ask"}}
	for trial := range trials {
		info := must(ask[commands.RunInfo](t, nc, "start_run", map[string]any{"location": ws, "rules": rules}))
		out := must(ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: 1,
			Calls: []commands.CallRequest{{ID: "c1", Tool: "append_fx", Args: json.RawMessage(fmt.Sprintf(`{"text":"ask %d","path":"effects"}`, trial))}}}))
		if len(out.Tickets) != 1 {
			t.Fatalf("trial %d: %+v, want one ticket", trial, out)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				_, errs[i] = ask[commands.ReplyResult](t, nc, "reply", commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: "once", Principal: "ops"})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if commands.Code(err) != commands.CodeTicketResolved {
				t.Fatalf("trial %d: %v", trial, err)
			}
		}
		if ok != 1 {
			t.Fatalf("trial %d: %d replies took effect (%v)", trial, ok, errs)
		}
	}
	b2, err := os.ReadFile(filepath.Join(ws, "effects"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b2), "\n"); lines != trials {
		t.Errorf("the approved calls ran %d times in all, want %d (exactly once each)", lines, trials)
	}
}
