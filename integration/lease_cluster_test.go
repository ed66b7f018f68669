package integration

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// An Awaiting run never depends on its host: on a three-node cluster (R3
// stream and lease bucket) with one engine host on each of two nodes, the
// host that decided a step awaiting a human is SIGKILLed; the reply, sent
// through the third node, is handled by the other host on its own node, and
// the approved call runs exactly once. The dead host's lease is then taken
// over with nothing to settle, and the call still ran once.
// It relies on every host seeing the same filesystem: all its runs' locations are one temporary directory of this machine.
func TestAwaitingRunSurvivesItsHostOnACluster(t *testing.T) {
	c := startCluster(t, clNodes)
	hosts := map[string]*leased{}
	for i, name := range []string{"h1", "h2"} {
		hosts[name] = serveLeased(t, c.url(i), name, "--replicas", "3")
	}
	nc := c.connect(clNodes - 1)
	ws := t.TempDir()
	info := must(query[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws,
		Rules: []gate.Rule{{Action: "append_fx", Resource: "*", Effect: gate.Ask}}}))
	b, _ := json.Marshal(map[string]string{"text": "approved once", "path": "effects"})
	out := must(query[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: "append_fx", Args: b}}}))
	if len(out.Tickets) != 1 {
		t.Fatalf("step 1 = %+v, want one ticket", out)
	}
	checkReplicas(t, nc, 3)
	if r := leaseReplicas(t, nc); r != 3 {
		t.Errorf("the lease bucket has %d replicas, want the stream's 3", r)
	}
	victim := showRun(t, nc, info.Run).Steps[0].Host
	survivor := map[string]string{"h1": "h2", "h2": "h1"}[victim]
	hosts[victim].kill9(t)

	// The reply goes to whichever host the queue group picks: only the
	// survivor is left. A copy sent again after a lost answer may find the
	// ticket resolved by the first: that is this reply.
	req := commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "ops"}
	if _, err := query[commands.ReplyResult](t, nc, "reply", req); err != nil && commands.Code(err) != commands.CodeTicketResolved {
		t.Fatalf("reply: %v", err)
	}
	var st projection.Step
	until(t, "step 1 final", func() bool { st = showRun(t, nc, info.Run).Steps[0]; return st.Final })
	if c := st.Calls[0]; c.Result == nil || c.Result.Parts[0].Text != "approved once" || st.Host != survivor {
		t.Fatalf("step 1: %+v (host %s), want the call's result, committed by %s", c, st.Host, survivor)
	}
	until(t, victim+"'s lease taken over", func() bool {
		rec := leaseRecord(t, nc, victim)
		return rec.State == step.LeaseSettled && rec.By == survivor && rec.Steps == 0
	})
	if n := lines(t, ws, "effects")["approved once"]; n != 1 {
		t.Errorf("the approved call ran %d times, want once", n)
	}
}

// leaseReplicas is the lease bucket's replica count as the cluster reports
// it.
func leaseReplicas(t *testing.T, nc *nats.Conn) int {
	t.Helper()
	msg, err := nc.Request("$JS.API.STREAM.INFO.KV_"+step.DefaultStream+step.LeaseBucketSuffix, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Config struct {
			Replicas int `json:"num_replicas"`
		} `json:"config"`
	}
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		t.Fatal(err)
	}
	return info.Config.Replicas
}
