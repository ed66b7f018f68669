package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// Fault shape: runs driven at once during a trial, and how long the stream
// leader's node stays down.
const (
	faultRuns     = 6
	faultDownTime = time.Second
)

// The node leading the stream is shut down while two hosts on the other
// nodes (and one on it) take steps of several runs, and started again on its
// store a moment later, faultTrials times. The clients send a request again
// while the answer is only "no answer yet" or unavailable, as the engine's
// client does. Invariants (leaderFaults): no client sees any other error;
// every step a client saw final is in show, final, with its result; the runs
// go on after the election (each takes more steps after the node is back).
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestStreamLeaderNodeDownOnACluster(t *testing.T) {
	c := startCluster(t, clNodes)
	leaderFaults(t, c, faultTrials, "shut down", func(leader int) {
		c.stop(leader)
		time.Sleep(faultDownTime)
		c.start(leader)
		c.waitMetaLeader()
	})
}

// faultCluster is a cluster whose nodes a fault trial takes down.
type faultCluster interface {
	url(i int) string
	urls() string
	streamLeader(stream string) int
}

// leaderFaults starts a host on each node of c and, trials times, drives
// runs through them while fault does something to the stream leader's node
// (and undoes it), then checks the runs: the invariants of
// TestStreamLeaderNodeDownOnACluster.
func leaderFaults(t *testing.T, c faultCluster, trials int, what string, fault func(leader int)) {
	ws := t.TempDir()
	var srvs []*server
	for i := range clNodes {
		srvs = append(srvs, serveArgs(t, "--nats", c.url(i), "--replicas", "3", "--data", t.TempDir(), "--host", fmt.Sprintf("h%d", i+1), "--test-tools"))
	}
	defer func() {
		for i := len(srvs) - 1; i >= 0; i-- {
			_ = srvs[i].cmd.Process.Signal(syscall.SIGTERM)
			_ = srvs[i].cmd.Wait()
			if t.Failed() {
				t.Logf("host h%d: %v\n%s", i+1, srvs[i].cmd.ProcessState, tail(srvs[i].stderr.String(), 20))
			}
		}
	}()
	nc, err := nats.Connect(c.urls(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	f := &faulty{t: t, nc: nc}
	for trial := 1; trial <= trials; trial++ {
		leader := c.streamLeader(step.DefaultStream)
		var stop atomic.Bool
		var wg sync.WaitGroup
		runs := make([]*faultRun, faultRuns)
		for r := range runs {
			runs[r] = &faultRun{}
			wg.Go(func() { f.drive(ws, runs[r], &stop) })
		}
		time.Sleep(300 * time.Millisecond)
		began, before := time.Now(), f.steps.Load()
		fault(leader)
		took, during := time.Since(began), f.steps.Load()-before
		newLeader := c.streamLeader(step.DefaultStream)
		back := make([]int, faultRuns)
		for r, fr := range runs {
			back[r] = fr.final()
		}
		time.Sleep(700 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		for r, fr := range runs {
			if fr.final() <= back[r] && !fr.failed.Load() {
				t.Errorf("trial %d: run %d took no step after node n%d was back (%d final steps)", trial, r, leader+1, fr.final())
			}
			f.checkRun(ws, trial, fr)
		}
		t.Logf("trial %d: node n%d (stream leader) %s and back after %v (%d steps final meanwhile), leader now n%d; %d runs, %d final steps, %d resent requests, %d errors",
			trial, leader+1, what, took.Round(time.Millisecond), during, newLeader+1, faultRuns, f.steps.Load(), f.resent.Load(), f.errs.Load())
	}
	if n := f.errs.Load(); n > 0 {
		t.Fatalf("%d requests failed with an error a client cannot ride out (the first ones are logged above)", n)
	}
}

// faulty drives runs through a cluster whose nodes come and go.
type faulty struct {
	t                   *testing.T
	nc                  *nats.Conn
	errs, resent, steps atomic.Int64
}

// faultRun is one run and the steps its client saw final.
type faultRun struct {
	id     string
	mu     sync.Mutex
	seen   []string // seen[n-1] is step n's result
	failed atomic.Bool
}

func (fr *faultRun) final() int {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return len(fr.seen)
}

// retryable reports whether a client sends the request again: no answer
// yet, or unavailable; and, to a copy sent again, a conflict — the echo of an
// earlier copy still at work on the step (the engine's client keeps waiting
// for that copy's answer; this one, on a new inbox each time, asks again for
// the recorded outcome).
func retryable(err error, resent bool) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || strings.Contains(err.Error(), commands.CodeUnavailable+":") ||
		resent && strings.Contains(err.Error(), commands.CodeConflict+":")
}

// request asks the service, sending the request again while the failure is
// retryable, for 30 s at most.
func (f *faulty) request(endpoint string, req, out any) error {
	b, _ := json.Marshal(req)
	deadline := time.Now().Add(30 * time.Second)
	for resent := false; ; resent = true {
		err := func() error {
			msg, err := f.nc.Request("stepgate."+endpoint, b, 2*time.Second)
			if err != nil {
				return fmt.Errorf("%s: %w", endpoint, err)
			}
			if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
				return fmt.Errorf("%s: %s: %s", endpoint, code, msg.Header.Get(micro.ErrorHeader))
			}
			return json.Unmarshal(msg.Data, out)
		}()
		if err == nil || !retryable(err, resent) || time.Now().After(deadline) {
			return err
		}
		f.resent.Add(1)
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *faulty) fail(format string, args ...any) {
	if f.errs.Add(1) <= 10 {
		f.t.Errorf(format, args...)
	}
}

// fxFile is the file, in the location, that run's append_fx calls append to.
func fxFile(run string) string { return "fx-" + run }

// drive starts a run and takes steps until stop, each an append_fx call
// whose line in the run's effects file is its side effect.
func (f *faulty) drive(ws string, fr *faultRun, stop *atomic.Bool) {
	var info commands.RunInfo
	if err := f.request("start_run", map[string]any{"location": ws}, &info); err != nil {
		fr.failed.Store(true)
		f.fail("start_run: %v", err)
		return
	}
	fr.id = info.Run
	for n := 1; !stop.Load(); n++ {
		text := fmt.Sprintf("run %s step %d", info.Run, n)
		var out commands.StepOutcome
		args, _ := json.Marshal(map[string]string{"text": text, "path": fxFile(info.Run)})
		req := commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: []commands.CallRequest{{ID: fmt.Sprintf("c%d", n), Tool: "append_fx", Args: args}}}
		if err := f.request("submit_step", req, &out); err != nil {
			fr.failed.Store(true)
			f.fail("run %s step %d: %v", info.Run, n, err)
			return
		}
		if !out.Final || len(out.Results) != 1 || out.Results[0].Content != text {
			fr.failed.Store(true)
			f.fail("run %s step %d: %+v, want final with %q", info.Run, n, out, text)
			return
		}
		fr.mu.Lock()
		fr.seen = append(fr.seen, text)
		fr.mu.Unlock()
		f.steps.Add(1)
	}
}

// checkRun checks that every step the client saw final is in show, final,
// with the result the client saw, and its side effect happened once; that
// no side effect happened twice; and, for a run whose client saw every step
// it sent, that the run holds no other step (none half visible).
func (f *faulty) checkRun(ws string, trial int, fr *faultRun) {
	if fr.id == "" {
		return
	}
	var run projection.Run
	if err := f.request("show", commands.ShowRequest{Run: fr.id}, &run); err != nil {
		f.fail("trial %d: show %s: %v", trial, fr.id, err)
		return
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	counts := map[string]int{}
	if len(fr.seen) > 0 {
		counts = effectCounts(f.t, filepath.Join(ws, fxFile(fr.id)))
	}
	for n, text := range fr.seen {
		s := run.Step(n + 1)
		if s == nil || !s.Final || len(s.Calls) != 1 || s.Calls[0].Result == nil || s.Calls[0].Result.Parts[0].Text != text {
			f.fail("trial %d: run %s step %d, seen final with %q, shows as %+v: a committed step is lost", trial, fr.id, n+1, text, s)
		}
		if counts[text] != 1 {
			f.fail("trial %d: run %s step %d: its side effect happened %d times", trial, fr.id, n+1, counts[text])
		}
	}
	for line, c := range counts {
		if c > 1 {
			f.fail("trial %d: run %s: side effect %q happened %d times", trial, fr.id, line, c)
		}
	}
	if !fr.failed.Load() && len(run.Steps) != len(fr.seen) {
		f.fail("trial %d: run %s holds %d steps, its client saw %d final and sent no other", trial, fr.id, len(run.Steps), len(fr.seen))
	}
}

// urls returns every node's client URL, comma-separated (as --nats takes them).
func (c *natsCluster) urls() string {
	s := c.url(0)
	for i := 1; i < len(c.opts); i++ {
		s += "," + c.url(i)
	}
	return s
}
