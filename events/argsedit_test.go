package events_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
)

// A resolution with edited arguments is written at version 2 and read back
// whole; one without stays at version 1; a version-2 resolution is Unknown
// to a reader that knows only version 1 (tested by its bound: v3 is).
func TestTicketResolvedWithAnEditIsVersion2(t *testing.T) {
	edit := events.TicketResolved{Ticket: "T1", CallID: "c1", Reply: events.ReplyOnce, Approved: true, Principal: "ops-1",
		Edit: &events.ArgsEdit{Original: json.RawMessage(`{"path":"a","content":"x"}`), Args: json.RawMessage(`{"path":"a","content":"y"}`),
			ArgsSHA: "s", Requests: []events.Request{{Action: "edit", Resources: []string{"a"}, Save: []string{"*"}}},
			Observed: "sha256:ab", Paths: []events.ResolvedPath{{Path: "a", Real: "/w/a"}}}}
	plain := events.TicketResolved{Ticket: "T2", CallID: "c2", Reply: events.ReplyOnce, Approved: true}
	c := &events.Commit{ID: "C1", Run: "R1", Step: 1, Kind: events.KindResolve, Events: []events.Event{edit, plain}}
	b, err := events.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Events []struct {
			Type string `json:"type"`
			V    int    `json:"v"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Events[0].V != 2 || raw.Events[1].V != 1 {
		t.Errorf("versions written: edit %d, plain %d; want 2 and 1", raw.Events[0].V, raw.Events[1].V)
	}
	got, err := events.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Events, got.Events); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	future := strings.Replace(string(b), `"v":2`, `"v":3`, 1)
	got, err = events.Unmarshal([]byte(future))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Events[0].(events.Unknown); !ok {
		t.Errorf("a TicketResolved of version 3 decoded as %T, want Unknown", got.Events[0])
	}
}
