package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/cmd/engine/hosting/metricstest"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// servedProcess is `engine serve` running in this process: its NATS URL,
// its metrics URL, and how to stop it.
type servedProcess struct {
	natsURL, metricsURL string
	stop                func() error
}

// serveWithMetrics runs `engine serve --metrics 127.0.0.1:0` in-process and
// waits for it to say where it serves.
func serveWithMetrics(t *testing.T, extra ...string) *servedProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--test-tools"}, extra...), &stdout, &stderr)
	}()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			return fmt.Errorf("serve did not stop within 30s")
		}
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v\n%s", err, stderr.String())
		}
	})
	natsRe := regexp.MustCompile(`serving on (nats://[^,\s]+),`)
	metricsRe := regexp.MustCompile(`metrics on (http://\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := stdout.String()
		n, m := natsRe.FindStringSubmatch(out), metricsRe.FindStringSubmatch(out)
		if n != nil && m != nil {
			t.Logf("serve: %s", out)
			return &servedProcess{natsURL: n[1], metricsURL: m[1], stop: stop}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v\n%s%s", err, out, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not say where it serves:\n%s%s", out, stderr.String())
		}
	}
}

// A real `engine serve --metrics` is driven through an allow, a block, a
// refused call, an ask and its reply, and a settle that loses its race to a
// stray message on the run's subject; /metrics, scraped over HTTP, counts
// exactly that.
func TestServeMetricsCountWhatWasDriven(t *testing.T) {
	s := serveWithMetrics(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cf := connFlags{natsURL: s.natsURL, timeout: 30 * time.Second}
	c, err := cf.dialClient(log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	fams := metricstest.Scrape(t, s.metricsURL)
	for _, want := range []struct {
		name   string
		labels []string
	}{
		{"stepgate_commits_total", []string{"kind", "decide"}}, {"stepgate_commit_conflicts_total", []string{"kind", "settle"}},
		{"stepgate_verdicts_total", []string{"verdict", "confirm"}}, {"stepgate_tickets_pending", nil},
		{"stepgate_quarantined_messages_total", nil}, {"stepgate_projector_lag_sequences", nil},
	} {
		if got := metricstest.Sample(fams, want.name, want.labels...); got != 0 {
			t.Errorf("at start %s%v = %v, want 0", want.name, want.labels, got)
		}
	}
	if got := metricstest.Sample(fams, "stepgate_lease_held"); got != 1 {
		t.Errorf("at start stepgate_lease_held = %v, want 1 (serve takes its lease before it serves)", got)
	}
	if got := metricstest.Sample(fams, "stepgate_lease_takeovers_total"); got != 0 {
		t.Errorf("at start stepgate_lease_takeovers_total = %v, want 0", got)
	}
	if fams["go_goroutines"] == nil || fams["process_resident_memory_bytes"] == nil {
		t.Errorf("the Go and process collectors are missing")
	}

	ws := t.TempDir()
	// The build agent allows the rest.
	info, err := c.StartRun(ctx, commands.StartRunRequest{Location: ws, Rules: []gate.Rule{
		{Action: "echo", Resource: "nope", Effect: gate.Deny},
		{Action: "echo_fx", Resource: "*", Effect: gate.Ask},
	}})
	if err != nil {
		t.Fatal(err)
	}
	submit := func(n int, calls ...commands.CallRequest) *commands.StepOutcome {
		t.Helper()
		out, err := c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: calls})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		return out
	}
	echo := func(tool, text string) commands.CallRequest {
		b, _ := json.Marshal(map[string]string{"text": text})
		return commands.CallRequest{ID: "c1", Tool: tool, Args: b}
	}
	submit(1, echo("echo", "hello"))         // allow, one commit
	submit(2, echo("echo", "nope"))          // block, one commit
	submit(3, echo("no_such_tool", "hello")) // reject (unknown tool), one commit
	asked := submit(4, echo("echo_fx", "ask me"))
	if len(asked.Tickets) != 1 {
		t.Fatalf("step 4 = %+v, want one ticket", asked)
	}
	fams = metricstest.Scrape(t, s.metricsURL)
	if got := metricstest.Sample(fams, "stepgate_tickets_pending"); got != 1 {
		t.Errorf("tickets pending while asking = %v, want 1", got)
	}
	if age := metricstest.Sample(fams, "stepgate_tickets_oldest_pending_age_seconds"); age <= 0 || age > 60 {
		t.Errorf("oldest pending age = %v, want a few milliseconds", age)
	}
	res, err := c.Reply(ctx, commands.ReplyRequest{Ticket: asked.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "tester"})
	if err != nil || !res.Approved || res.Outcome == nil {
		t.Fatalf("reply = %+v, %v; want approved and final", res, err)
	}
	fams = metricstest.Scrape(t, s.metricsURL)
	if got := metricstest.Sample(fams, "stepgate_tickets_pending"); got != 0 {
		t.Errorf("tickets pending after the reply = %v, want 0", got)
	}
	if got := metricstest.Sample(fams, "stepgate_tickets_oldest_pending_age_seconds"); got != 0 {
		t.Errorf("oldest pending age after the reply = %v, want 0", got)
	}

	// Step 5 runs a side-effecting call that waits on a file; while it runs,
	// a stray message lands on the run's subject, so the settle commit's
	// expectation is stale: one conflict, then the settle commits.
	gate := filepath.Join(ws, "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	settled := make(chan error, 1)
	go func() {
		b, _ := json.Marshal(map[string]string{"text": "waited", "path": "gate"})
		_, err := c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 5,
			Calls: []commands.CallRequest{{ID: "c1", Tool: "wait_fx", Args: b}}})
		settled <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); metricstest.Sample(metricstest.Scrape(t, s.metricsURL), "stepgate_commits_total", "kind", "decide") < 2; {
		if time.Now().After(deadline) {
			t.Fatal("step 5's decide commit did not come")
		}
		time.Sleep(5 * time.Millisecond)
	}
	nc, err := nats.Connect(s.natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, events.RunSubject(info.Run), []byte("not a commit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if err := <-settled; err != nil {
		t.Fatalf("step 5: %v", err)
	}

	fams = metricstest.Scrape(t, s.metricsURL)
	for _, want := range []struct {
		name   string
		labels []string
		value  float64
		why    string
	}{
		{"stepgate_commits_total", []string{"kind", "start"}, 1, "one run"},
		{"stepgate_commits_total", []string{"kind", "step"}, 3, "steps 1-3: nothing to guard, one commit each"},
		{"stepgate_commits_total", []string{"kind", "decide"}, 2, "steps 4 and 5 are side-effecting"},
		{"stepgate_commits_total", []string{"kind", "resolve"}, 1, "the reply"},
		{"stepgate_commits_total", []string{"kind", "settle"}, 3, "step 4 awaiting, the approved call's result, step 5's"},
		{"stepgate_commit_conflicts_total", []string{"kind", "settle"}, 1, "step 5's settle after the stray message"},
		{"stepgate_commit_conflicts_total", []string{"kind", "decide"}, 0, "no decision lost a race"},
		{"stepgate_verdicts_total", []string{"verdict", "allow"}, 2, "steps 1 and 5"},
		{"stepgate_verdicts_total", []string{"verdict", "block"}, 1, "step 2"},
		{"stepgate_verdicts_total", []string{"verdict", "reject"}, 1, "step 3"},
		{"stepgate_verdicts_total", []string{"verdict", "confirm"}, 1, "step 4"},
		{"stepgate_resume_latency_seconds", nil, 1, "one approved reply"},
		{"stepgate_tool_duration_seconds", []string{"tool", "echo"}, 1, "step 1 (step 2 was blocked)"},
		{"stepgate_tool_duration_seconds", []string{"tool", "echo_fx"}, 1, "step 4 after its reply"},
		{"stepgate_tool_duration_seconds", []string{"tool", "wait_fx"}, 1, "step 5"},
		{"stepgate_tool_duration_seconds", []string{"tool", "no_such_tool"}, -1, "never ran"},
		{"stepgate_quarantined_messages_total", nil, 1, "the stray message"},
		{"stepgate_tickets_pending", nil, 0, "answered"},
	} {
		if got := metricstest.Sample(fams, want.name, want.labels...); got != want.value {
			t.Errorf("%s%v = %v, want %v (%s)", want.name, want.labels, got, want.value, want.why)
		}
	}
	// The projection catches up with what it did not commit itself (the
	// stray message) on its own: the lag comes back to 0.
	deadline := time.Now().Add(10 * time.Second)
	for metricstest.Sample(metricstest.Scrape(t, s.metricsURL), "stepgate_projector_lag_sequences") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("projector lag did not come back to 0")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(s.metricsURL); err == nil {
		t.Errorf("metrics still served after serve stopped")
	}
}
