package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// twoHostRun is a run two hosts of one fleet took part in: h1 started it,
// ran step 1 (an allowed echo beside a blocked call) and decided step 2
// (a push that asks); the reply was taken by h2, which ran the push and
// settled it. Both hosts serve the service in one queue group on url.
type twoHostRun struct {
	url, run string
	h1, h2   *commands.Host
}

func recordTwoHostRun(t *testing.T) *twoHostRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("start embedded nats-server: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	clock := &stepClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	rules := gate.Ruleset{
		{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceDefault},
		{Action: "push", Resource: "*", Effect: gate.Ask, Source: gate.SourceUser},
		{Action: "work", Resource: "secret*", Effect: gate.Deny, Source: gate.SourceUser},
	}
	start := func(name string) *commands.Host {
		nc, err := srv.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		h, err := commands.StartHost(ctx, js, showTools(t, clock), commands.HostConfig{
			StateDir: t.TempDir(),
			Lease:    commands.LeaseConfig{Off: true},
			Engine: commands.Config{Host: name, Version: "0.0.0-test", ToolOutputDir: t.TempDir(), Clock: clock.Now,
				Policy: func(string, string) commands.Policy { return commands.Policy{Rules: rules} }},
		})
		if err != nil {
			t.Fatalf("start host %s: %v", name, err)
		}
		served, unserve := context.WithCancel(ctx)
		stop, err := serveAPI(served, nc, h, "0.0.0-test", logger(io.Discard))
		if err != nil {
			unserve()
			t.Fatal(err)
		}
		t.Cleanup(func() {
			unserve() // the service stops when its context ends
			if err := stop(); err != nil {
				t.Error(err)
			}
			if err := h.Close(); err != nil {
				t.Errorf("close host %s: %v", name, err)
			}
		})
		return h
	}
	r := &twoHostRun{url: srv.ClientURL(), h1: start("h1"), h2: start("h2")}
	on1, on2 := commands.Wire{Host: r.h1}, commands.Wire{Host: r.h2}
	info, err := on1.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	r.run = info.Run
	text := func(s string) json.RawMessage { return json.RawMessage(`{"text":"` + s + `"}`) }
	o, err := on1.SubmitStep(ctx, commands.SubmitStepRequest{Run: r.run, Step: 1, Calls: []commands.CallRequest{
		{ID: "c1", Tool: "echo", Args: text("hello")}, {ID: "c2", Tool: "work", Args: text("secret-plan")}}})
	if err != nil || !o.Final {
		t.Fatalf("step 1 on h1: %+v, %v", o, err)
	}
	o, err = on1.SubmitStep(ctx, commands.SubmitStepRequest{Run: r.run, Step: 2, Calls: []commands.CallRequest{{ID: "c1", Tool: "push", Args: text("main")}}})
	if err != nil || len(o.Tickets) != 1 {
		t.Fatalf("step 2 on h1: %+v, %v; want one ticket", o, err)
	}
	if _, err := on2.Reply(ctx, commands.ReplyRequest{Ticket: o.Tickets[0].ID, Run: r.run, Reply: events.ReplyOnce, Principal: "alice"}); err != nil {
		t.Fatalf("reply on h2: %v", err)
	}
	if done, err := on1.AwaitStep(ctx, commands.AwaitRequest{Run: r.run, Step: 2, Timeout: "30s"}); err != nil || !done.Final {
		t.Fatalf("await step 2 on h1: %+v, %v", done, err)
	}
	if _, err := on1.EndRun(ctx, commands.EndRunRequest{Run: r.run}); err != nil {
		t.Fatal(err)
	}
	return r
}

// `engine show RUN --nats URL` on a fleet of two hosts says where each
// call ran: the echo on h1, which ran step 1; the push on h2, which took
// the reply that approved it and ran it, though h1 decided it; nothing for
// the blocked call, which ran nowhere. --json says the same in the run's
// calls and in the timeline, either host answers the same, and the
// report (`engine report`, the page the inbox frames) says it too.
func TestShowSaysWhichHostRanEachCall(t *testing.T) {
	r := recordTwoHostRun(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := runShow(ctx, []string{"--nats", r.url, "--timeout", "10s", "--color", "never", r.run}, &stdout, &stderr); err != nil {
		t.Fatalf("engine show --nats: %v\n%s", err, stderr.String())
	}
	t.Logf("engine show:\n%s", stdout.String())
	want := map[string]string{ // a call's line, and where the result line after it says it ran
		`c1 echo {"text":"hello"}`:       "ran on h1",
		`c2 work {"text":"secret-plan"}`: "",
		`c1 push {"text":"main"}`:        "ran on h2",
	}
	lines := strings.Split(stdout.String(), "\n")
	for call, where := range want {
		found := false
		for i, l := range lines {
			if strings.TrimSpace(l) != call {
				continue
			}
			found = true
			var result string
			for _, next := range lines[i+1:] {
				if strings.HasPrefix(strings.TrimSpace(next), "→") || strings.HasPrefix(strings.TrimSpace(next), "✗") {
					result = next
					break
				}
			}
			switch {
			case where == "" && strings.Contains(result, "ran on"):
				t.Errorf("%s: result %q says where it ran; it ran nowhere", call, result)
			case where != "" && !strings.Contains(result, where+"]"):
				t.Errorf("%s: result %q; want it to say %s", call, result, where)
			}
		}
		if !found {
			t.Errorf("engine show printed no line %q", call)
		}
	}
	if n := strings.Count(stdout.String(), "ran on "); n != 2 {
		t.Errorf("engine show says %d times where a call ran; want twice (the echo and the push)", n)
	}

	for name, h := range map[string]*commands.Host{"h1": r.h1, "h2": r.h2} {
		d, err := showRun(ctx, commands.Wire{Host: h}, r.run)
		if err != nil {
			t.Fatal(err)
		}
		var got [][]string
		for i, s := range d.Timeline.Steps {
			var step []string
			for j, c := range s.Calls {
				if wire := d.Run.Steps[i].Calls[j].RanOn; wire != c.RanOn {
					t.Errorf("asked %s: step %d call %s: the run says it ran on %q, the timeline %q", name, s.N, c.ID, wire, c.RanOn)
				}
				step = append(step, c.Tool+"@"+c.RanOn)
			}
			got = append(got, step)
		}
		if diff := cmp.Diff([][]string{{"echo@h1", "work@"}, {"push@h2"}}, got); diff != "" {
			t.Errorf("asked %s: where the calls ran, tool@host (-want +got):\n%s", name, diff)
		}
	}
	stdout.Reset()
	if err := runShow(ctx, []string{"--nats", r.url, "--timeout", "10s", "--json", r.run}, &stdout, &stderr); err != nil {
		t.Fatalf("engine show --json: %v\n%s", err, stderr.String())
	}
	var doc struct {
		sgclient.Run
		Timeline render.TimelineView `json:"timeline"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Steps) != 2 || doc.Steps[1].Calls[0].RanOn != "h2" || doc.Timeline.Steps[1].Calls[0].RanOn != "h2" || doc.Steps[0].Calls[1].RanOn != "" {
		t.Errorf("engine show --json: %s; want the push's ran_on h2 in the run and the timeline, none for the blocked call", stdout.String())
	}

	file := filepath.Join(t.TempDir(), "run.html")
	if err := runReport(ctx, []string{"--nats", r.url, "--timeout", "10s", "-o", file, r.run}, io.Discard, &stderr); err != nil {
		t.Fatalf("engine report --nats: %v\n%s", err, stderr.String())
	}
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ran := regexp.MustCompile(`<span class="call">(\w+ \w+) .*?</span>\n`).FindAllStringSubmatch(string(page), -1)
	var calls []string
	for _, m := range ran {
		where := ""
		if h := regexp.MustCompile(`ran on <span class="mono ran-on">(\w+)</span>`).FindStringSubmatch(m[0]); h != nil {
			where = h[1]
		}
		calls = append(calls, m[1]+"@"+where)
	}
	t.Logf("engine report: calls %q", calls)
	if diff := cmp.Diff([]string{"c1 echo@h1", "c2 work@", "c1 push@h2"}, calls); diff != "" {
		t.Errorf("where the report says each call ran, call@host (-want +got):\n%s", diff)
	}
}
