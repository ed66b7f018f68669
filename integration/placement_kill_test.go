package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
)

// Shape of the kill trials: trials per test, effects per run.
const (
	placeKillTrials  = 10
	placeKillEffects = 8
)

// How a trial kills a host: between two steps, or while a step's call runs
// (its effect made already, or not yet).
const (
	killBetween = iota
	killAfterEffect
	killBeforeEffect
)

var killHow = [...]string{"between steps", "in flight, after its effect", "in flight, before its effect"}

// killPlan is when trial i kills: after k effects, how.
func killPlan(i int) (k, how int) { return 1 + i%(placeKillEffects-2), i % 3 }

// plainEffect is the call that makes effect e.
func plainEffect(e int) commands.CallRequest {
	return bashCall(fmt.Sprintf("e%d", e), fmt.Sprintf("echo %d >> effects.txt", e))
}

// heldEffect runs effects 1..k of d's run (loc is its location on the real
// filesystem), then calls kill between two steps or while effect k+1's
// call runs (how says whether its line is written before or after it
// holds; the call writes its engine's pid to pid-N first), giving it the
// request the driver sends next and its effect; it returns the effect to
// go on from.
func heldEffect(t *testing.T, d *careful, loc string, k, how int, kill func(next commands.SubmitStepRequest, e int)) int {
	t.Helper()
	for e := 1; e <= k; e++ {
		d.effect(e, plainEffect(e))
	}
	if how == killBetween {
		kill(commands.SubmitStepRequest{Run: d.run, Step: d.next, Calls: []commands.CallRequest{plainEffect(k + 1)}}, k+1)
		return k + 1
	}
	e := k + 1
	held := filepath.Join(loc, "hold")
	mark := filepath.Join(loc, fmt.Sprintf("mark-%d", e))
	if err := os.WriteFile(held, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("echo $PPID > pid-%d; touch mark-%d; %s; echo %d >> effects.txt", e, e, hold, e)
	if how == killAfterEffect {
		cmd = fmt.Sprintf("echo $PPID > pid-%d; echo %d >> effects.txt; touch mark-%d; %s", e, e, e, hold)
	}
	req := commands.SubmitStepRequest{Run: d.run, Step: d.next, Calls: []commands.CallRequest{bashCall(fmt.Sprintf("e%d", e), cmd)}}
	b, _ := json.Marshal(req)
	inbox := nats.NewInbox()
	answers, err := d.nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer answers.Unsubscribe()
	if err := d.nc.PublishRequest("stepgate.submit_step", inbox, b); err != nil {
		t.Fatal(err)
	}
	until(t, "the held call's start", func() bool {
		if msg, err := answers.NextMsg(0); err == nil { // answered, and the call never started in its location
			t.Fatalf("step %d (effect %d) was answered before its call started in its location: %s %s",
				req.Step, e, msg.Header.Get("Nats-Service-Error"), msg.Data)
		}
		_, err := os.Stat(mark)
		return err == nil
	})
	kill(req, e)
	if err := os.Remove(held); err != nil {
		t.Fatal(err)
	}
	d.effect(e, bashCall(fmt.Sprintf("e%d", e), cmd)) // the same step again, as a client whose answer was lost
	return e + 1
}

// A holds the runs' location (it exists only on A's filesystem), B does not.
// In each of 10 trials a run of 8 bash steps, each appending its effect's
// number to effects.txt, is driven through the queue group; A is killed
// with SIGKILL after a varying number of steps, between two steps or while
// one runs. While A is down, and after B took A's lease over, the next
// step is not executed on B, nor A's call in doubt settled there: the client
// gets no_executor or no answer. A is started again (same data, same name)
// and the driver goes on like a careful model (an indeterminate call is
// checked against effects.txt and made again only when its line is
// missing): every effect happens exactly once, no step is left open, and
// every result was committed by A.
func TestPlacementHolderKilled(t *testing.T) {
	needNamespaces(t)
	for i := range placeKillTrials {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) { holderKilled(t, i) })
	}
}

func holderKilled(t *testing.T, trial int) {
	c := startProcServer(t)
	root, src := workspaces(t, "A", "B")
	mkfiles(t, src["A"], map[string]string{"a/": ""})
	a := serveNS(t, "A", src["A"], root, "--nats", c.url(0), "--lease", leaseTTL)
	serveNS(t, "B", src["B"], root, "--nats", c.url(0), "--lease", leaseTTL)
	nc, err := nats.Connect(c.url(0))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	loc := filepath.Join(root, "a")
	var refused atomic.Int64
	run := startPlaced(t, nc, loc, &refused)
	if run == "" {
		t.FailNow()
	}
	d := &careful{t: t, nc: nc, run: run, next: 1, effects: filepath.Join(src["A"], "a", "effects.txt")}
	k, how := killPlan(trial)
	var probe string
	next := heldEffect(t, d, filepath.Join(src["A"], "a"), k, how, func(req commands.SubmitStepRequest, _ int) {
		a.kill()
		// B takes A's lease over, but not A's run: it does not hold the run's
		// location. A settles the call it left in doubt once restarted.
		until(t, "B's takeover of A's lease", func() bool { return leaseRecord(t, nc, "A").By == "B" })
		probe = probeDown(t, nc, req, "A")
		a.restart()
	})
	for e := next; e <= placeKillEffects; e++ {
		d.effect(e, plainEffect(e))
	}
	d.exactlyOnce(placeKillEffects)
	d.noneOpen()
	results, _ := newRunLog(t, nc).results(run)
	for _, res := range results {
		if res.host != "A" {
			t.Errorf("the result of step %d was committed by %q, want the holder A", res.step, res.host)
		}
	}
	t.Logf("trial %d: A killed after %d effects, %s; while down: %s; then %d steps, %d in doubt, %d redone, %d waits, %d no_executor (%s)",
		trial+1, k, killHow[how], probe, d.next-1, d.inDoubt, d.redone, d.waits, d.noExec, d.lastNote)
}

// probeDown submits the run's next step (req, which the driver sends
// again after) once while the location's holder is down: the answer must
// be no_executor or none (the step waits), never a final outcome made
// elsewhere. It says what it got.
func probeDown(t *testing.T, nc *nats.Conn, req commands.SubmitStepRequest, holder string) string {
	t.Helper()
	var out commands.StepOutcome
	a := askService(nc, "submit_step", req, 2*time.Second, &out)
	switch {
	case a.waited():
		return "no answer (" + a.err.Error() + ")"
	case a.code == codeNoExecutor:
		return "no_executor: " + a.msg
	case a.code != "":
		return a.code + ": " + a.msg // another step is open: the probe is not the next one
	}
	t.Errorf("with %s down, step %d was answered: %+v", holder, req.Step, out)
	return "answered"
}
