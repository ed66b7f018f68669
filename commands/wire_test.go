package commands_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step/steptest"
)

// sameWire encodes what the engine answered, decodes it as the wire type W
// and encodes that again: the bytes must be the same, so the wire types of
// package client describe what the service sends field for field.
func sameWire[W any](t *testing.T, what string, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var w W
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("%s: decode as the wire type: %v\n%s", what, err, want)
	}
	got, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: the wire type re-encodes differently:\nengine: %s\nwire:   %s", what, want, got)
	}
}

func TestWireTypesCarryTheEnginesAnswersByteForByte(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	run, out := awaiting(t, h, "p1", call("a", "count_fx", text{"ask me"}), call("b", "count_fx", text{"plain"}))
	if len(out.Tickets) != 1 {
		t.Fatalf("tickets = %d, want 1", len(out.Tickets))
	}
	if _, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyAlways, Principal: "ops"}); err != nil {
		t.Fatal(err)
	}
	r, err := h.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tickets) != 1 || r.Tickets[0].Resolution == nil || len(r.Steps) != 1 {
		t.Fatalf("run = %+v, want one step and one resolved ticket", r)
	}
	sameWire[client.Run](t, "show", r)
	grants, err := h.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(grants) == 0 {
		t.Fatal("no grant saved by the always reply")
	}
	revoked, err := h.RevokeGrant(ctx, commands.RevokeRequest{ID: grants[0].ID, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	sameWire[[]client.Grant](t, "grants", grants)
	sameWire[client.Grant](t, "revoke_grant", revoked)
	sum, err := h.EndRun(ctx, commands.EndRunRequest{Run: run, Reason: "done"})
	if err != nil {
		t.Fatal(err)
	}
	sameWire[client.RunSummary](t, "end_run", sum)
	runs, err := h.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameWire[[]client.RunSummary](t, "runs", runs)
	ended, err := h.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	sameWire[client.Run](t, "show of the ended run", ended)
}
