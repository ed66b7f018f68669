package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// fleetOfTwo serves hosts A and B on one server, A holding root/a/* and B
// root/b/* (one filesystem here: the declarations keep them apart; the
// integration tests give each host a filesystem of its own).
func fleetOfTwo(t testing.TB) (e *servicetest.Engine, b *servicetest.Member, root string) {
	t.Helper()
	e, b, root, _ = fleetCounted(t)
	return e, b, root
}

// forwards counts, per host, the requests it forwarded (commands.Metrics).
type forwards struct{ n atomic.Int64 }

func (f *forwards) Commit(events.Kind, bool)       {}
func (f *forwards) Verdict(string)                 {}
func (f *forwards) ToolDone(string, time.Duration) {}
func (f *forwards) Resumed(time.Duration)          {}
func (f *forwards) Forwarded(string)               { f.n.Add(1) }
func (f *forwards) NoExecutor(string)              {}

// fleetCounted is fleetOfTwo with what each host forwarded counted.
func fleetCounted(t testing.TB) (e *servicetest.Engine, b *servicetest.Member, root string, fwd [2]*forwards) {
	t.Helper()
	fwd = [2]*forwards{{}, {}}
	root = t.TempDir()
	for _, d := range []string{"a/w", "b/w"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e, err := servicetest.StartWith(commands.Config{Host: "A", Locations: []string{filepath.Join(root, "a", "*")}, Metrics: fwd[0]})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if b, err = e.AddHost(commands.Config{Host: "B", Locations: []string{filepath.Join(root, "b", "*")}, Metrics: fwd[1]}); err != nil {
		t.Fatal(err)
	}
	return e, b, root, fwd
}

func writeCall(n int) client.CallRequest {
	args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("f%d.txt", n), "content": fmt.Sprint(n)})
	return client.CallRequest{ID: fmt.Sprintf("c%d", n), Tool: "write", Args: args}
}

// Runs in a location only B holds start, and take every step, on B,
// whichever host the queue group hands the request to: every write lands
// in B's directory and every step is committed by B; a run in A's the
// same on A. A location no host declares cannot start.
func TestStepsRunWhereTheLocationIsHeld(t *testing.T) {
	e, mb, root, fwd := fleetCounted(t)
	hb := mb.Host
	c, err := client.Dial(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, side := range []struct{ dir, holder string }{{"b", "B"}, {"a", "A"}} {
		loc := filepath.Join(root, side.dir, "w")
		info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc})
		if err != nil {
			t.Fatalf("start a run in %s: %v", loc, err)
		}
		const steps = 12
		for n := 1; n <= steps; n++ {
			out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: n, Calls: []client.CallRequest{writeCall(n)}})
			if err != nil {
				t.Fatalf("step %d in %s: %v", n, loc, err)
			}
			if r := out.Results[0]; r.IsError {
				t.Fatalf("step %d in %s: %s", n, loc, r.Content)
			}
		}
		// The client sends a run's steps to the host that decided the last
		// one: at most its first start and first step were forwarded.
		if got := fwd[0].n.Load() + fwd[1].n.Load(); got > 2 {
			t.Errorf("run in %s: %d requests forwarded, want at most its start and first step", loc, got)
		}
		fwd[0].n.Store(0)
		fwd[1].n.Store(0)
		for n := 1; n <= steps; n++ {
			if _, err := os.Stat(filepath.Join(loc, fmt.Sprintf("f%d.txt", n))); err != nil {
				t.Errorf("write of step %d: %v", n, err)
			}
		}
		if err := hb.Proj.Sync(ctx, hb.Log); err != nil {
			t.Fatal(err)
		}
		r, ok, err := hb.Proj.Run(info.Run)
		if err != nil || !ok {
			t.Fatalf("run %s: %v (found %t)", info.Run, err, ok)
		}
		for n := 1; n <= steps; n++ {
			if got := r.Step(n).Host; got != side.holder {
				t.Errorf("run in %s: step %d committed by %s, want its holder %s", loc, n, got, side.holder)
			}
		}
	}
	// engine locations: each location held by its own host, as it checked.
	list, err := c.Locations(ctx, client.LocationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Locations) != 2 {
		t.Fatalf("locations: %+v, want the two of the runs", list.Locations)
	}
	for _, l := range list.Locations {
		want := "A"
		if strings.Contains(l.Path, "/b/") {
			want = "B"
		}
		if len(l.Holders) != 1 || l.Holders[0].Host != want || !l.Holders[0].Holds || l.LastHost != want || l.Runs != 1 {
			t.Errorf("location %s: %+v, want held by %s alone, its last step there", l.Path, l, want)
		}
	}
	nowhere := filepath.Join(root, "c")
	if err := os.MkdirAll(nowhere, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = c.StartRun(ctx, client.StartRunRequest{Location: nowhere})
	if client.Code(err) != client.CodeInvalidInput {
		t.Errorf("start a run where no host holds: %v (code %q), want invalid_input", err, client.Code(err))
	}
}

// With the holder of a run's location gone, a step is executed nowhere:
// the client is answered no_executor, naming the location, and the file
// is not written; a directory moved away and made again at the path is
// not the run's location, and is not written either.
func TestNoExecutorWhenTheHolderIsGone(t *testing.T) {
	e, mb, root := fleetOfTwo(t)
	c, err := client.Dial(e.URL, client.WithTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	loc := filepath.Join(root, "b", "w")
	info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []client.CallRequest{writeCall(1)}}); err != nil {
		t.Fatal(err)
	}

	// The directory is replaced under B: B no longer holds the run's place.
	if err := os.Rename(loc, loc+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(loc, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []client.CallRequest{writeCall(2)}})
	if !errors.Is(err, client.ErrNoExecutor) && !strings.Contains(err.Error(), "no_executor") {
		t.Fatalf("step 2 in a directory made again: %v, want no_executor", err)
	}
	if !strings.Contains(err.Error(), loc) || !strings.Contains(err.Error(), "another directory") {
		t.Errorf("no_executor %q: want it to name the location and why", err)
	}
	if _, err := os.Stat(filepath.Join(loc, "f2.txt")); err == nil {
		t.Error("step 2 wrote into the directory made again")
	}
	list, err := c.Locations(ctx, client.LocationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Locations) != 1 || len(list.Locations[0].Holders) != 1 || list.Locations[0].Holders[0].Holds ||
		!strings.Contains(list.Locations[0].Holders[0].Why, "another directory") {
		t.Errorf("locations with the directory made again: %+v, want B not holding it, and why", list.Locations)
	}
	if err := os.Remove(loc); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(loc+".moved", loc); err != nil {
		t.Fatal(err)
	}

	// B stops: no host holds the location any more.
	mb.Stop()
	_, err = c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []client.CallRequest{writeCall(2)}})
	if err == nil || !strings.Contains(err.Error(), "no live host holds it") {
		t.Fatalf("step 2 with its holder gone: %v, want no_executor", err)
	}
	if _, err := os.Stat(filepath.Join(loc, "f2.txt")); err == nil {
		t.Error("step 2 ran with its holder gone")
	}
	// The caller's own deadline, shorter than the client's: the code still
	// says why.
	short, stop := context.WithTimeout(ctx, 2*time.Second)
	defer stop()
	patient, err := client.Dial(e.URL, client.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer patient.Close()
	_, err = patient.SubmitStep(short, client.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []client.CallRequest{writeCall(2)}})
	if client.Code(err) != client.CodeNoExecutor {
		t.Errorf("step 2 until the caller's deadline: %v (code %q), want no_executor", err, client.Code(err))
	}
}

// An approval runs the approved call on the run's holder, whichever host
// the reply lands on; an "always" that unblocks a waiting run of the same
// project held by the other host has that host approve and run it.
func TestApprovalsRunOnTheHolder(t *testing.T) {
	e, mb, root := fleetOfTwo(t)
	c, err := client.Dial(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ask := []gate.Rule{{Action: "edit", Resource: "*", Effect: gate.Ask}}
	type waiting struct {
		run, ticket, loc, holder string
	}
	var runs []waiting
	for _, side := range []struct{ dir, holder string }{{"a", "A"}, {"b", "B"}} {
		loc := filepath.Join(root, side.dir, "w")
		info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc, Project: "shared", Rules: ask})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []client.CallRequest{writeCall(1)}})
		if err != nil || out.Final || len(out.Tickets) != 1 {
			t.Fatalf("step 1 in %s: %+v, %v; want it waiting on a ticket", loc, out, err)
		}
		runs = append(runs, waiting{info.Run, out.Tickets[0].ID, loc, side.holder})
	}
	// Approve A's run "always", asking B: B forwards the reply to A, A's
	// call runs there, and B's run, waiting on the same project's same
	// request, is approved by B (A forwards it back) and runs there.
	if _, err := (commands.Wire{Host: mb.Host}).Reply(ctx, client.ReplyRequest{Ticket: runs[0].ticket, Reply: "always", Principal: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range runs {
		out, err := c.AwaitStep(ctx, client.AwaitRequest{Run: w.run, Step: 1, Timeout: "60s"})
		if err != nil || !out.Final || out.Results[0].IsError {
			t.Fatalf("run in %s: %+v, %v; want step 1 final and written", w.loc, out, err)
		}
		if _, err := os.Stat(filepath.Join(w.loc, "f1.txt")); err != nil {
			t.Errorf("run in %s: %v", w.loc, err)
		}
		if err := mb.Host.Proj.Sync(ctx, mb.Host.Log); err != nil {
			t.Fatal(err)
		}
		r, ok, err := mb.Host.Proj.Run(w.run)
		if err != nil || !ok {
			t.Fatal(err)
		}
		if got := r.Step(1).Calls[0].RanOn; got != w.holder {
			t.Errorf("run in %s: the approved call ran on %q, want its holder %s", w.loc, got, w.holder)
		}
	}
}

// A client that sends a run's steps to the host that decided the last one
// goes back to the queue group when that host is gone: on a shared
// location (both hosts hold it) the other host takes the next step.
func TestStickyStepsFallBackWhenTheHostIsGone(t *testing.T) {
	root := t.TempDir()
	loc := filepath.Join(root, "shared", "w")
	if err := os.MkdirAll(loc, 0o755); err != nil {
		t.Fatal(err)
	}
	glob := []string{filepath.Join(root, "shared", "*")}
	e, err := servicetest.StartWith(commands.Config{Host: "A", Locations: glob})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	mb, err := e.AddHost(commands.Config{Host: "B", Locations: glob})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.Dial(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	// Steps, each from a client that remembers nothing yet, until one is
	// decided by B: that client then sends the next one to B.
	n := 0
	for host := ""; host != "B"; {
		n++
		if n > 50 {
			t.Fatal("50 steps and the queue group never handed one to B")
		}
		c.Close()
		if c, err = client.Dial(e.URL); err != nil {
			t.Fatal(err)
		}
		out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: n, Calls: []client.CallRequest{writeCall(n)}})
		if err != nil {
			t.Fatal(err)
		}
		host = out.Host
	}
	defer c.Close()
	mb.Stop()
	out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: n + 1, Calls: []client.CallRequest{writeCall(n + 1)}})
	if err != nil {
		t.Fatalf("the step after its host stopped: %v", err)
	}
	if out.Host != "A" || out.Results[0].IsError {
		t.Fatalf("the step after B stopped: %+v, want it decided and run by A", out)
	}
}
