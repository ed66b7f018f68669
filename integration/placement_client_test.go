package integration

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/client"
)

// The Go client rides out a holder's absence: A holds the run's location,
// B does not; A is killed with SIGKILL between two steps, and the client's
// SubmitStep of the next step (through B, answered no_executor) keeps
// sending it within its deadline. It is still waiting once B took A's lease
// over; A is started again, and the step returns final, run once, by A.
// With a timeout (WithTimeout) shorter than the absence, the client gives
// up with ErrNoExecutor, and the step did not run.
func TestPlacementGoClientWaitsForHolder(t *testing.T) {
	needNamespaces(t)
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
	var refused atomic.Int64
	run := startPlaced(t, nc, filepath.Join(root, "a"), &refused)
	if run == "" {
		t.FailNow()
	}
	d := &careful{t: t, nc: nc, run: run, next: 1, effects: filepath.Join(src["A"], "a", "effects.txt")}
	d.effect(1, plainEffect(1))
	a.kill()
	until(t, "B's takeover of A's lease", func() bool { return leaseRecord(t, nc, "A").By == "B" })

	_, err = client.New(nc, client.WithTimeout(2*time.Second)).SubmitStep(context.Background(),
		client.SubmitStepRequest{Run: run, Step: 2, Calls: []client.CallRequest{plainEffect(2)}})
	if !errors.Is(err, client.ErrNoExecutor) {
		t.Errorf("SubmitStep with A down and a 2s timeout: %v, want ErrNoExecutor", err)
	}
	gc := client.New(nc)
	if n := d.effectLines()["2"]; n != 0 {
		t.Fatalf("effect 2 happened %d times while its holder was down", n)
	}

	// Every copy the client sends is seen here too (a plain subscriber
	// beside the service's queue group).
	sends, err := nc.SubscribeSync("stepgate.submit_step")
	if err != nil {
		t.Fatal(err)
	}
	defer sends.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		out *client.StepOutcome
		err error
	}
	done := make(chan answer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		out, err := gc.SubmitStep(ctx, client.SubmitStepRequest{Run: run, Step: 2, Calls: []client.CallRequest{plainEffect(2)}})
		done <- answer{out, err}
	}()
	for n := 0; n < 3; n++ { // three copies: twice answered no_executor, and sent again
		if _, err := sends.NextMsg(30 * time.Second); err != nil {
			t.Fatalf("the client's copy %d of step 2: %v", n+1, err)
		}
	}
	select {
	case got := <-done:
		t.Fatalf("SubmitStep returned with A down: %+v, %v", got.out, got.err)
	default:
	}
	a.restart()
	got := <-done
	if got.err != nil || !got.out.Final || len(got.out.Results) != 1 || got.out.Results[0].IsError {
		t.Fatalf("SubmitStep after A came back: %+v, %v", got.out, got.err)
	}
	d.next = 3
	d.effect(3, plainEffect(3))
	d.exactlyOnce(3)
	d.noneOpen()
	results, _ := newRunLog(t, nc).results(run)
	for _, res := range results {
		if res.host != "A" {
			t.Errorf("the result of step %d was committed by %q, want the holder A", res.step, res.host)
		}
	}
	t.Logf("run %s: step 2 waited for A and ran once there", run)
}
