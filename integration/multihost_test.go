package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// Multi-host shape: runs, steps per run, steps that ask, runs driven by
// `engine run` processes (the first cliAsking of them with an ask rule and
// --wait), and how many runs are driven at once.
const (
	mhRuns      = 100
	mhSteps     = 20
	mhAskEvery  = 5 // a nats-client run of every mhAskRunEvery asks at steps 5, 10, …
	mhAskRunOf  = 4
	mhCLIRuns   = 6
	mhCLIAsking = 2
	mhParallel  = 16
)

// Two and three `engine serve` processes on one NATS server (the first
// embeds it, the others connect with --nats) serve 100 runs of 20 steps
// driven concurrently through the service's queue group — by plain NATS
// requests and by `engine run` processes. Consecutive steps, replies and
// await_step land on whichever host the queue group picks, which has often
// not folded what another host committed and answered a moment before.
// Nothing fails: every request succeeds, every step is final with its own
// result, and show of every run is the same whichever host answers it.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestRunsAcrossHostProcesses(t *testing.T) {
	for _, hosts := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d hosts", hosts), func(t *testing.T) { multiHost(t, hosts) })
	}
}

func multiHost(t *testing.T, hosts int) {
	ws := t.TempDir()
	addr := freeAddr(t)
	url := "nats://" + addr
	srvs := []*server{serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1", "--test-tools")}
	for i := 2; i <= hosts; i++ {
		srvs = append(srvs, serveArgs(t, "--nats", url, "--data", t.TempDir(), "--host", fmt.Sprintf("h%d", i), "--test-tools"))
	}
	defer func() {
		for i := len(srvs) - 1; i >= 0; i-- {
			_ = srvs[i].cmd.Process.Signal(syscall.SIGTERM)
			_ = srvs[i].cmd.Wait()
		}
	}()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m := &multi{t: t, nc: nc}
	stop := m.replyToCLITickets()

	start := time.Now()
	runs := m.drive(mhRuns, mhParallel, func(r int) string {
		if r < mhCLIRuns {
			return m.cliRun(url, ws, r, r < mhCLIAsking)
		}
		return m.natsRun(ws, r, r%mhAskRunOf == 0)
	})
	stop()
	t.Logf("%d hosts: %d runs of %d steps in %v; %d replies, %d awaits, %d errors",
		hosts, mhRuns, mhSteps, time.Since(start).Round(time.Millisecond), m.replies.Load(), m.awaits.Load(), m.errs.Load())
	if n := m.errs.Load(); n > 0 {
		t.Fatalf("%d requests failed (the first ones are logged above)", n)
	}
	m.checkShows(runs, hosts)
	m.checkEveryHostServed(hosts)
}

// checkEveryHostServed asks every service instance for its statistics:
// each answered steps, replies, waits and shows, and none answered an error.
func (m *multi) checkEveryHostServed(hosts int) {
	t := m.t
	inbox := nats.NewInbox()
	sub, err := m.nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := m.nc.PublishRequest("$SRV.STATS.stepgate", inbox, nil); err != nil {
		t.Fatal(err)
	}
	for i := range hosts {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("statistics of %d of %d hosts: %v", i, hosts, err)
		}
		var st micro.Stats
		if err := json.Unmarshal(msg.Data, &st); err != nil {
			t.Fatal(err)
		}
		served := map[string]int{}
		for _, ep := range st.Endpoints {
			served[ep.Name] = ep.NumRequests
			if ep.NumErrors > 0 {
				t.Errorf("instance %s: %d errors on %s: %s", st.ID, ep.NumErrors, ep.Name, ep.LastError)
			}
		}
		for _, ep := range []string{"submit_step", "reply", "await_step", "show"} {
			if served[ep] == 0 {
				t.Errorf("instance %s answered no %s request: %v", st.ID, ep, served)
			}
		}
	}
}

// multi drives runs and counts what went wrong.
type multi struct {
	t  *testing.T
	nc *nats.Conn
	// hops, when set, are connections to different servers of a cluster: a
	// run's step n goes through hops[n], its await_step through hops[n+1]
	// and its reply through hops[n+2] (modulo len), so consecutive requests
	// of a run enter the cluster at different servers (the queue group then
	// hands each to any host).
	hops            []*nats.Conn
	errs            atomic.Int64
	replies, awaits atomic.Int64
}

// via returns the connection of hop k: m.nc without hops.
func (m *multi) via(k int) *nats.Conn {
	if len(m.hops) == 0 {
		return m.nc
	}
	return m.hops[k%len(m.hops)]
}

// drive runs one(r) for r in [0, runs), parallel at a time, and returns
// what each returned (the run's id).
func (m *multi) drive(runs, parallel int, one func(r int) string) []string {
	ids := make([]string, runs)
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for r := range work {
				ids[r] = one(r)
			}
		})
	}
	for r := range runs {
		work <- r
	}
	close(work)
	wg.Wait()
	return ids
}

// fail records one failed request; the first few are logged.
func (m *multi) fail(format string, args ...any) {
	if m.errs.Add(1) <= 10 {
		m.t.Errorf(format, args...)
	}
}

// request asks the service and decodes the answer into out.
func (m *multi) request(endpoint string, req, out any) error {
	return m.requestVia(m.nc, endpoint, req, out)
}

// requestVia asks the service through nc.
func (m *multi) requestVia(nc *nats.Conn, endpoint string, req, out any) error {
	b, _ := json.Marshal(req)
	msg, err := nc.Request("stepgate."+endpoint, b, 60*time.Second)
	if err != nil {
		return fmt.Errorf("%s: %w", endpoint, err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return fmt.Errorf("%s: %s: %s", endpoint, code, msg.Header.Get(micro.ErrorHeader))
	}
	return json.Unmarshal(msg.Data, out)
}

var askRule = []map[string]string{{"action": "echo_fx", "resource": "ask *", "effect": "ask"}}

// natsRun drives run r with plain NATS requests. When asking, every
// mhAskEvery-th step asks; its ticket is replied to and the step awaited at
// once, each on whichever host the queue group picks.
func (m *multi) natsRun(ws string, r int, asking bool) string {
	start := map[string]any{"location": ws}
	if asking {
		start["rules"] = askRule
	}
	var info commands.RunInfo
	if err := m.request("start_run", start, &info); err != nil {
		m.fail("run %d: %v", r, err)
		return ""
	}
	for n := 1; n <= mhSteps; n++ {
		text := fmt.Sprintf("run %d step %d", r, n)
		ask := asking && n%mhAskEvery == 0
		if ask {
			text = "ask " + text
		}
		var out commands.StepOutcome
		req := commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: []commands.CallRequest{
			{ID: fmt.Sprintf("c%d", n), Tool: "echo_fx", Args: json.RawMessage(fmt.Sprintf(`{"text":%q}`, text))}}}
		if err := m.requestVia(m.via(n), "submit_step", req, &out); err != nil {
			m.fail("run %d: %v", r, err)
			return info.Run
		}
		if ask {
			if out.Final || len(out.Tickets) != 1 {
				m.fail("run %d step %d: %+v, want it to await one ticket", r, n, out)
				return info.Run
			}
			if !m.replyAndAwait(info.Run, n, out.Tickets[0].ID, &out) {
				return info.Run
			}
		}
		if !out.Final || len(out.Results) != 1 || out.Results[0].Content != text {
			m.fail("run %d step %d: %+v, want final with %q", r, n, out, text)
			return info.Run
		}
	}
	var sum commands.RunSummary
	if err := m.requestVia(m.via(mhSteps+1), "end_run", commands.EndRunRequest{Run: info.Run}, &sum); err != nil {
		m.fail("run %d: %v", r, err)
	} else if sum.Steps != mhSteps || sum.Status != projection.StatusEnded {
		m.fail("run %d ended as %+v", r, sum)
	}
	return info.Run
}

// replyAndAwait answers a ticket and awaits its step at the same time; out
// becomes what the await saw, which must be what the reply finished.
func (m *multi) replyAndAwait(run string, n int, ticket string, out *commands.StepOutcome) bool {
	var (
		wg       sync.WaitGroup
		res      commands.ReplyResult
		awaited  commands.StepOutcome
		rerr     error
		awaitErr error
	)
	wg.Go(func() {
		awaitErr = m.requestVia(m.via(n+1), "await_step", commands.AwaitRequest{Run: run, Step: n}, &awaited)
	})
	wg.Go(func() {
		rerr = m.requestVia(m.via(n+2), "reply", commands.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "ops"}, &res)
	})
	wg.Wait()
	m.replies.Add(1)
	m.awaits.Add(1)
	if rerr != nil || awaitErr != nil {
		m.fail("run %s step %d: reply: %v; await: %v", run, n, rerr, awaitErr)
		return false
	}
	if d := cmp.Diff(res.Outcome, &awaited); d != "" {
		m.fail("run %s step %d: the reply's outcome and the await's differ (-reply +await):\n%s", run, n, d)
		return false
	}
	*out = awaited
	return true
}

// checkShows asks show of every run of several times over (the queue group
// spreads the asks over the hosts): every answer is the same, holds every
// step final, and the run ended.
func (m *multi) checkShows(runs []string, hosts int) {
	t := m.t
	for r, run := range runs {
		var raw json.RawMessage
		for i := range 3 * hosts {
			var got json.RawMessage
			if err := m.requestVia(m.via(i), "show", commands.ShowRequest{Run: run}, &got); err != nil {
				t.Fatalf("run %d: %v", r, err)
			}
			if raw == nil {
				raw = got
			} else if !bytes.Equal(raw, got) {
				t.Fatalf("run %d: two hosts show it differently:\n%s\n%s", r, raw, got)
			}
		}
		var first projection.Run
		if err := json.Unmarshal(raw, &first); err != nil {
			t.Fatal(err)
		}
		if first.Status != projection.StatusEnded || len(first.Steps) != mhSteps {
			t.Errorf("run %d: %s with %d steps, want ended with %d", r, first.Status, len(first.Steps), mhSteps)
		}
		for _, s := range first.Steps {
			if !s.Final {
				t.Errorf("run %d step %d is not final", r, s.N)
			}
		}
	}
}
