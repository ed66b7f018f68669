package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// grantRun drives a real engine on data through a run of seven steps: step
// 3's call asks and is answered "always" (a saved grant), and the grant is
// revoked after step 5 (so during step 6). It returns the run and the grant.
func grantRun(t *testing.T, ctx context.Context, e *hosting.Embedded) (runID, grant string) {
	t.Helper()
	h := e.Host
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: "p1",
		Rules: []gate.Rule{{Action: "echo_fx", Resource: "ask *", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	step := func(n int, text string) *commands.StepOutcome {
		t.Helper()
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: []commands.CallRequest{
			{ID: "c" + string(rune('0'+n)), Tool: "echo_fx", Args: json.RawMessage(`{"text":"` + text + `"}`)}}})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		return out
	}
	step(1, "plain")
	step(2, "plain")
	out := step(3, "ask me")
	if len(out.Tickets) != 1 {
		t.Fatalf("step 3: %d tickets, want 1", len(out.Tickets))
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: info.Run, Step: 3}); err != nil {
		t.Fatal(err)
	}
	gs, err := h.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if err != nil || len(gs) != 1 {
		t.Fatalf("grants after the always: %v: %v", gs, err)
	}
	step(4, "ask again") // allowed by the grant
	step(5, "plain")
	if _, err := h.RevokeGrant(ctx, commands.RevokeRequest{ID: gs[0].ID, Principal: "sec"}); err != nil {
		t.Fatal(err)
	}
	step(6, "plain")
	step(7, "plain")
	return info.Run, gs[0].ID
}

// showAtJSON is `engine show RUN --at STEP --json` with the connection
// flags given, decoded.
func showAtJSON(t *testing.T, ctx context.Context, conn []string, runID string, at string) *render.AtView {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args := append(append([]string{"show"}, conn...), "--at", at, "--json", runID)
	if err := run(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("show --at %s: %v\n%s", at, err, stderr.String())
	}
	v := new(render.AtView)
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		t.Fatalf("show --at %s --json: %v\n%s", at, err, stdout.String())
	}
	return v
}

// checkGrantAt checks the acceptance: at step 4 the grant saved at
// step 3 is in force, with who saved it and when; at step 7, after it was
// revoked, it is not (it is listed revoked, by whom).
func checkGrantAt(t *testing.T, ctx context.Context, conn []string, runID, grant string) {
	t.Helper()
	at4 := showAtJSON(t, ctx, conn, runID, "4")
	if len(at4.State.Steps) != 4 || len(at4.Grants) != 1 || at4.Grants[0].ID != grant || at4.Grants[0].Principal != "ops" ||
		at4.Grants[0].SavedSeq == 0 || at4.Grants[0].SavedAt.IsZero() || len(at4.Revoked) != 0 {
		t.Errorf("--at 4: %d steps, grants %+v, revoked %+v; want 4 steps and grant %s in force, saved by ops",
			len(at4.State.Steps), at4.Grants, at4.Revoked, grant)
	}
	at7 := showAtJSON(t, ctx, conn, runID, "7")
	if len(at7.State.Steps) != 7 || len(at7.Grants) != 0 || len(at7.Revoked) != 1 || at7.Revoked[0].ID != grant ||
		at7.Revoked[0].Revoked.Principal != "sec" || at7.Revoked[0].RevokedSeq <= at4.Seq || at7.Seq <= at7.Revoked[0].RevokedSeq {
		t.Errorf("--at 7: %d steps, grants %+v, revoked %+v; want 7 steps, no grant in force, %s revoked by sec",
			len(at7.State.Steps), at7.Grants, at7.Revoked, grant)
	}
	t.Logf("--at 4: stream sequence %d, grants %d; --at 7: stream sequence %d, grants %d, revoked %d",
		at4.Seq, len(at4.Grants), at7.Seq, len(at7.Grants), len(at7.Revoked))
}

// engine show RUN --at STEP --data DIR folds every projection to the step.
func TestShowAtFoldsTheGrantsToTheStep(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	e, err := startEmbedded(ctx, hosting.Options{DataDir: data, HostName: "test", TestTools: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runID, grant := grantRun(t, ctx, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	conn := []string{"--data", data}
	checkGrantAt(t, ctx, conn, runID, grant)

	var stdout, stderr bytes.Buffer
	if err := run(ctx, []string{"show", "--data", data, "--at", "4", runID}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	for _, want := range []string{"as of step 4 of run " + runID, "grants in force in project p1: 1", grant + "  echo_fx", "saved by ops"} {
		if !strings.Contains(text, want) {
			t.Errorf("show --at 4 lacks %q:\n%s", want, text)
		}
	}
	for _, tc := range []struct{ at, want string }{{"8", "has 7 steps, not 8"}, {"0", "wants a step number from 1"}} {
		err := run(ctx, []string{"show", "--data", data, "--at", tc.at, runID}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("show --at %s: %v, want %q", tc.at, err, tc.want)
		}
	}
}

// engine show RUN --at STEP --nats URL reads the stream with the user's
// connection, while an engine serves it.
func TestShowAtOverNATS(t *testing.T) {
	ctx := context.Background()
	e, err := startEmbedded(ctx, hosting.Options{DataDir: t.TempDir(), HostName: "test", TestTools: true, Listen: "127.0.0.1:0",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	runID, grant := grantRun(t, ctx, e)
	checkGrantAt(t, ctx, []string{"--nats", e.Server.ClientURL()}, runID, grant)
}
