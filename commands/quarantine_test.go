package commands_test

import (
	"context"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// A stray message on a run's subject that this host has not folded yet: the
// next commit loses the race against it, the catch-up folds it (quarantined,
// the run's last sequence moved past it) and the step is decided again and
// committed: the run goes on, never wedged, and the client sees no error.
func TestStrayMessageOnARunSubjectDoesNotWedgeIt(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := commands.StartHost(ctx, s.JS, registry(t, &counter{}), commands.HostConfig{
		StateDir: t.TempDir(), Engine: commands.Config{Host: "h"},
		// The follower looks only when asked: the stray message reaches
		// this host through the refresh after a lost race.
		Projector: projection.Options{NoTail: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	step := func(n int) (*commands.StepOutcome, error) {
		return h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
			Calls: []commands.CallRequest{call("c", "echo", map[string]string{"text": "hi"})}})
	}
	if _, err := step(1); err != nil {
		t.Fatal(err)
	}
	ack, err := s.JS.Publish(ctx, events.RunSubject(info.Run), []byte("not a commit"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := step(2)
	if err != nil || !out.Final {
		t.Fatalf("step 2 against a run this host has not seen whole = %+v, %v; want it done", out, err)
	}
	l, err := h.Quarantine(ctx, commands.QuarantineRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Total != 1 || len(l.Messages) != 1 || l.Messages[0].Seq != ack.Sequence {
		t.Errorf("quarantine = %+v, want the stray message at %d", l, ack.Sequence)
	}
}
