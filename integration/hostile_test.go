package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// hostileMsg is one message another publisher on sg.> stores in the log.
type hostileMsg struct {
	what    string
	subject string
	data    []byte
}

// envelope is a commit as stored, written by hand.
func envelope(id, run string, step int64, kind, events string) []byte {
	runField := ""
	if run != "" {
		runField = fmt.Sprintf(`"run":%q,`, run)
	}
	return fmt.Appendf(nil, `{"id":%q,%s"step":%d,"kind":%q,"at":"2026-12-01T00:00:00Z","host":"intruder","events":%s}`,
		id, runField, step, kind, events)
}

// hostileMessages are more than twenty kinds of message no engine writes,
// aimed at runs a and b while u1 and u2 are left alone by their own
// subjects (two of the messages name u1 and u2 from elsewhere). again is a
// commit of a stored earlier, sent a second time with its id.
func hostileMessages(a, b, u1, u2 string, again []byte) []hostileMsg {
	runA, runB := "sg.run."+a, "sg.run."+b
	call := func(n int64) string {
		return fmt.Sprintf(`[{"type":"ToolCallRequested","v":1,"data":{"call_id":"x%d","tool":"echo"}}]`, n)
	}
	end := `[{"type":"RunEnded","v":1,"data":{"cause":"failed","reason":"forged"}}]`
	return []hostileMsg{
		{"non-JSON on a run subject", runA, []byte("not json at all")},
		{"non-JSON on a registry subject", "sg.registry.scope1", []byte("\xff\xfe garbage")},
		{"non-JSON on the output subject", "sg.output", []byte("{{{{")},
		{"JSON of another shape", runA, []byte(`[1,2,3]`)},
		{"an envelope with a wrong-typed field", runB, []byte(`{"id":5,"run":true,"events":"none"}`)},
		{"a wrong-typed event payload", runA, envelope("H-typed", a, 3, "step",
			`[{"type":"ToolCallRequested","v":1,"data":{"call_id":7,"tool":["echo"]}}]`)},
		{"another run's end on this run's subject", runA, envelope("H-foreign", u1, 0, "end", end)},
		{"a step far ahead", runA, envelope("H-ahead", a, 1000, "step", call(1000))},
		{"the start published again", runB, envelope("H-restart", b, 0, "start",
			`[{"type":"RunStarted","v":1,"data":{"agent":"build","location":"/","project":"p"}}]`)},
		{"an end of another run on the output subject", "sg.output", envelope("H-end-out", u2, 0, "end", end)},
		{"an end of another run on a grant subject", "sg.grant.p", envelope("H-end-grant", u2, 0, "end", end)},
		{"a commit sent again with its id", runB, again},
		{"a huge step number", runA, envelope("H-huge", a, 9223372036854775807, "step", call(1))},
		{"a step number past int64", runB, []byte(strings.Replace(string(envelope("H-overflow", b, 1, "step", call(1))), `"step":1`, `"step":1e300`, 1))},
		{"a negative step number", runA, envelope("H-negative", a, -5, "step", call(-5))},
		{"an unknown kind", runB, envelope("H-kind", b, 0, "teleport", end)},
		{"an empty body", runB, nil},
		{"no events", runA, envelope("H-empty", a, 0, "end", `[]`)},
		{"a registration on another scope's subject", "sg.registry.scope2", envelope("H-scope", "", 0, "registry",
			`[{"type":"ToolRegistered","v":1,"data":{"scope":"scope1","name":"echo","identity":"i"}}]`)},
		{"a commit of a run never started", "sg.run.NEVERSTARTED", envelope("H-never", "NEVERSTARTED", 1, "step", call(1))},
		{"a result for a call never made", runB, envelope("H-nocall", b, 1, "settle",
			`[{"type":"ToolResultRecorded","v":1,"data":{"call_id":"nobody","parts":[]}}]`)},
		{"an approval for another project inside a run", runA, envelope("H-grant", a, 1, "resolve",
			`[{"type":"ApprovalSaved","v":1,"data":{"id":"G","project":"elsewhere","action":"bash","resource":"*"}}]`)},
		{"a call slipped into a final step", runA, envelope("H-late", a, 1, "decide", call(99))},
		{"only unknown events, on a subject no run started", "sg.run.PHANTOM", envelope("H-phantom", "PHANTOM", 0, "catalog",
			`[{"type":"FromTheFuture","v":1}]`)},
		{"a subject the log does not use", "sg.elsewhere", envelope("H-subject", "", 0, "grant", end)},
		{"a settle of a step far ahead, its only event one this build cannot read", runA,
			envelope("H-far-settle", a, 1_000_000, "settle", unreadable)},
	}
}

// unreadable is an event this build cannot read: a StepFinalized named as
// no build names it, without its fields (issue 22's message).
const unreadable = `[{"type":"sg.v1.StepFinalized","v":1}]`

// echoStep submits step n of run: one echo call, and checks its answer.
func echoStep(t *testing.T, nc *nats.Conn, run string, n int) {
	t.Helper()
	text := fmt.Sprintf("%s step %d", run, n)
	args, _ := json.Marshal(map[string]string{"text": text})
	out, err := ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: run, Step: n,
		Calls: []commands.CallRequest{{ID: fmt.Sprint("c", n), Tool: "echo", Args: args}}})
	if err != nil {
		t.Fatalf("step %d of run %s: %v", n, run, err)
	}
	if !out.Final || len(out.Results) != 1 || out.Results[0].Content != text {
		t.Fatalf("step %d of run %s: %+v, want the echo of %q", n, run, out, text)
	}
}

// Another publisher on sg.> stores 26 kinds of hostile message while four
// runs are active, and a settle of the step run b takes next holding only
// an event this build cannot read (a newer build's, which folds: the step
// does not begin). `engine serve` keeps serving and checkpointing; every
// run goes on (those whose subjects got garbage too: none is wedged) and
// ends as its client says; `engine quarantine` lists exactly the hostile
// messages, before and after a SIGKILL and restart; the restarted host
// shows the runs as before and stops cleanly on SIGTERM (its last
// checkpoint written); `engine verify` agrees; and the host starts again
// from that checkpoint and serves a new run.
func TestHostileMessagesNeverStopAHost(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	addr := freeAddr(t)
	url := "nats://" + addr
	srv := serve(t, data, addr)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var runs []string
	for range 4 {
		runs = append(runs, must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws})).Run)
	}
	for _, r := range runs {
		echoStep(t, nc, r, 1)
		echoStep(t, nc, r, 2)
	}
	a, b, u1, u2 := runs[0], runs[1], runs[2], runs[3]

	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := js.Stream(ctx, "STEPGATE")
	if err != nil {
		t.Fatal(err)
	}
	lastB, err := stream.GetLastMsgForSubject(ctx, "sg.run."+b)
	if err != nil {
		t.Fatal(err)
	}
	msgs := hostileMessages(a, b, u1, u2, lastB.Data)
	want := map[uint64]string{}
	for i, m := range msgs {
		ack, err := js.Publish(ctx, m.subject, m.data)
		if err != nil {
			t.Fatalf("publish %s: %v", m.what, err)
		}
		want[ack.Sequence] = m.subject
		if i%5 == 4 { // while the runs go on
			echoStep(t, nc, u1, 3+i/5)
		}
	}
	if len(msgs) < 15 {
		t.Fatalf("only %d kinds of hostile message", len(msgs))
	}
	// Not quarantined: b's next step, named by a commit this build folds
	// without reading its event. A checkpoint once met that step marked
	// and not there, and crashed the host on every restart.
	if _, err := js.Publish(ctx, "sg.run."+b, envelope("H-next-settle", b, 3, "settle", unreadable)); err != nil {
		t.Fatal(err)
	}

	// The host lists each of them, and nothing else.
	checkListed := func(when string, l *commands.QuarantineList) {
		t.Helper()
		got := map[uint64]string{}
		for _, m := range l.Messages {
			got[m.Seq] = m.Subject
			if m.Reason == "" {
				t.Errorf("%s: seq %d quarantined without a reason", when, m.Seq)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" || l.Total != uint64(len(want)) {
			t.Errorf("%s: quarantine (total %d) differs from the hostile messages (-published +listed):\n%s", when, l.Total, diff)
		}
	}
	checkListed("served", must(ask[commands.QuarantineList](t, nc, "quarantine", commands.QuarantineRequest{})))

	// Every run goes on: a and b too, whose subjects got garbage.
	for _, r := range runs {
		var n int
		if r == u1 {
			n = 3 + len(msgs)/5
		} else {
			n = 3
		}
		echoStep(t, nc, r, n)
		echoStep(t, nc, r, n+1)
	}
	for _, r := range runs[:2] {
		sum := must(ask[commands.RunSummary](t, nc, "end_run", commands.EndRunRequest{Run: r}))
		if sum.Status != projection.StatusEnded || sum.Cause != "completed" {
			t.Errorf("run %s ended as %s (%s), want completed", r, sum.Status, sum.Cause)
		}
	}
	for _, r := range runs[2:] { // the forged ends of u1 and u2 ended nothing
		show := must(ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: r}))
		if show.Status != projection.StatusRunning {
			t.Errorf("run %s is %s after forged ends, want still running", r, show.Status)
		}
	}
	before := map[string]*projection.Run{}
	for _, r := range runs {
		before[r] = must(ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: r}))
	}
	srv.kill9(t)
	if got := strings.Count(srv.stderr.String(), "quarantined a message of the log"); got != len(msgs) {
		t.Errorf("the host logged %d quarantine warnings, want one per hostile message (%d):\n%s", got, len(msgs), srv.stderr.String())
	}

	// Restarted after SIGKILL: the same runs, the same quarantine, and the
	// untouched runs end as they should.
	srv = serve(t, data, addr)
	for _, r := range runs {
		after := must(ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: r}))
		if diff := cmp.Diff(before[r], after); diff != "" {
			t.Errorf("run %s after SIGKILL and restart (-before +after):\n%s", r, diff)
		}
	}
	checkListed("restarted", must(ask[commands.QuarantineList](t, nc, "quarantine", commands.QuarantineRequest{})))
	var listed commands.QuarantineList
	if err := json.Unmarshal([]byte(engine(t, "quarantine", "--nats", url, "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	checkListed("engine quarantine --nats", &listed)
	for _, r := range runs[2:] {
		sum := must(ask[commands.RunSummary](t, nc, "end_run", commands.EndRunRequest{Run: r}))
		if sum.Status != projection.StatusEnded || sum.Cause != "completed" {
			t.Errorf("run %s ended as %s (%s), want completed", r, sum.Status, sum.Cause)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("engine serve after SIGTERM: %v\n%s", err, srv.stderr.String())
	}

	// Offline, on the data directory: verify agrees, and lists them.
	out := engine(t, "verify", "--data", data)
	t.Logf("engine verify:\n%s", out)
	if !strings.Contains(out, fmt.Sprintf("%d messages quarantined", len(msgs))) || !strings.Contains(out, "verified 4 runs") {
		t.Errorf("engine verify:\n%s", out)
	}
	for seq, subject := range want {
		if !strings.Contains(out, fmt.Sprintf("seq %d  %s  ", seq, subject)) {
			t.Errorf("engine verify does not list seq %d on %s:\n%s", seq, subject, out)
		}
	}
	if err := json.Unmarshal([]byte(engine(t, "quarantine", "--data", data, "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	checkListed("engine quarantine --data", &listed)
	seqs := make([]uint64, 0, len(listed.Messages))
	for _, m := range listed.Messages {
		seqs = append(seqs, m.Seq)
	}
	if !slices.IsSorted(seqs) {
		t.Errorf("quarantine listed out of order: %v", seqs)
	}

	// Started again from the checkpoint SIGTERM wrote: the same quarantine,
	// the runs as they ended, and a new run served.
	srv = serve(t, data, addr)
	checkListed("started again", must(ask[commands.QuarantineList](t, nc, "quarantine", commands.QuarantineRequest{})))
	for _, r := range runs {
		if show := must(ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: r})); show.Status != projection.StatusEnded {
			t.Errorf("run %s is %s after a clean restart, want ended", r, show.Status)
		}
	}
	fresh := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws})).Run
	echoStep(t, nc, fresh, 1)
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("engine serve started again, after SIGTERM: %v\n%s", err, srv.stderr.String())
	}
}
