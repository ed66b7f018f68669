package integration

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// A host stopped and started again loads its checkpoint, replays only the
// commits made while it was down (by another host), and ends with exactly
// the projection a rebuild from sequence 1 gives.
func TestRestartReplaysOnlyTheTail(t *testing.T) {
	s := steptest.Start(t, "")
	reg := newCounted(t).reg
	ctx := ctxT(t)
	dir := t.TempDir()
	h1, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: "one"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := h1.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 10; n++ {
		if _, err := h1.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{call("c", "count_fx", strconv.Itoa(n))}}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := h1.Proj.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := h1.Close(); err != nil {
		t.Fatal(err)
	}

	// While host one is down, another host goes on with the run.
	h2 := startHost(t, s, reg, "two", "")
	for n := 11; n <= 13; n++ {
		if _, err := h2.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{call("c", "count", strconv.Itoa(n))}}); err != nil {
			t.Fatal(err)
		}
	}

	h1, err = commands.StartHost(ctx, s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: "one"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h1.Close()
	if got := h1.Proj.Replayed(); got != 3 {
		t.Errorf("host one replayed %d commits after its restart, want the 3 made while it was down", got)
	}
	after, err := h1.Proj.All()
	if err != nil {
		t.Fatal(err)
	}
	last, err := h1.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt, err := projection.Rebuild(ctx, h1.Log, last)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rebuilt.Runs, after); diff != "" {
		t.Errorf("projection after restart differs from a rebuild (-rebuild +restarted):\n%s", diff)
	}
	// The first 10 steps are exactly as before the restart.
	trim := before[info.Run]
	got := *after[info.Run]
	got.Steps, got.LastSeq, got.Commits, got.LastCommit, got.LastAt = got.Steps[:10], trim.LastSeq, trim.Commits, trim.LastCommit, trim.LastAt
	if diff := cmp.Diff(trim, &got); diff != "" {
		t.Errorf("steps 1–10 changed across the restart (-before +after):\n%s", diff)
	}
}

// A commit sent again exactly as the engine sent it (a retry after a lost
// ack) is never stored twice, and the log's retry learns the sequence the
// first attempt got — after later commits, and after a server restart that
// emptied the server's de-duplication table.
func TestDuplicatePublishIsStoredOnce(t *testing.T) {
	data := t.TempDir()
	s := steptest.Start(t, data)
	h := startHost(t, s, newCounted(t).reg, "h", "")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{call("c", "echo", "x")}}); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := h.Log.ReadRun(ctx, info.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 {
		t.Fatalf("run holds %d commits, want start and two steps", len(stored))
	}
	expected, retried := stored[0].Seq, stored[1] // step 1, committed on top of the start
	raw, err := events.Marshal(retried.Commit)
	if err != nil {
		t.Fatal(err)
	}
	// The raw message again, with both headers the engine sends.
	_, err = s.JS.PublishMsg(ctx, &nats.Msg{Subject: retried.Subject, Data: raw, Header: nats.Header{
		jetstream.MsgIDHeader:               []string{retried.Commit.ID},
		jetstream.ExpectedLastSubjSeqHeader: []string{strconv.FormatUint(expected, 10)},
	}})
	if err == nil {
		t.Error("republishing an old commit was accepted")
	}
	h.Close()
	s.Stop()

	s = steptest.Start(t, data)
	seq, err := s.Log.CommitTo(ctx, retried.Subject, retried.Commit, expected)
	if err != nil || seq != retried.Seq {
		t.Errorf("retried commit after a restart = %d, %v; want the original sequence %d", seq, err, retried.Seq)
	}
	again, err := s.Log.ReadRun(ctx, info.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, again); diff != "" {
		t.Errorf("run changed by the retries (-before +after):\n%s", diff)
	}
}

// A commit holding an event type this build has never heard of (written by
// a newer build) is folded without error: the host skips the event and goes on.
func TestUnknownEventTypeIsFolded(t *testing.T) {
	s := steptest.Start(t, "")
	reg := newCounted(t).reg
	h := startHost(t, s, reg, "h", "")
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := h.Proj.Header(info.Run)
	if err != nil {
		t.Fatal(err)
	}
	last := r.LastSeq
	future := &events.Commit{ID: events.NewIDSource(nil).New(time.Now()), Run: info.Run, Kind: "annotate", At: time.Now(),
		Events: []events.Event{events.Unknown{Type: "RunAnnotated", V: 3, Data: json.RawMessage(`{"note":"from a newer build"}`)}}}
	if _, err := h.Log.Commit(ctx, future, last); err != nil {
		t.Fatal(err)
	}
	// A fresh host folds the whole stream, unknown event included.
	h2 := startHost(t, s, reg, "h2", "")
	caughtUp(t, h, h2)
	out, err := h2.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{call("c", "echo", "still working")}})
	if err != nil {
		t.Fatalf("step after an unknown event: %v", err)
	}
	if got := out.Results[0].Content; got != "still working" {
		t.Errorf("result = %q", got)
	}
	if err := h2.Err(); err != nil {
		t.Errorf("projector: %v", err)
	}
}
