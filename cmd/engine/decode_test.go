package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stepgate/stepgate/commands"
)

// Every endpoint refuses a request with a field it does not have as
// invalid_input: a misspelt narrowing ("disabled_tools") must not be
// ignored and fail open.
func TestUnknownRequestFieldsAreInvalidInput(t *testing.T) {
	s := serveT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name := range endpoints() {
		t.Run(name, func(t *testing.T) {
			var out json.RawMessage
			err := s.client.Do(ctx, name, map[string]any{"no_such_field": 1}, &out)
			if got := commands.Code(err); got != commands.CodeInvalidInput {
				t.Errorf("%s with an unknown field = %v (code %q), want invalid_input", name, err, got)
			}
		})
	}
	loc := t.TempDir()
	var out json.RawMessage
	err := s.client.Do(ctx, epStartRun, map[string]any{"location": loc, "disabled_tools": true}, &out)
	if got := commands.Code(err); got != commands.CodeInvalidInput {
		t.Errorf("start_run with disabled_tools (a typo of disable_tools) = %v (code %q), want invalid_input", err, got)
	}
	runs, err := s.client.Runs(ctx)
	if err != nil || len(runs) != 0 {
		t.Errorf("runs after the refusals: %v, %v; want none started", runs, err)
	}
	// What the clients send still decodes.
	info, err := s.client.StartRun(ctx, commands.StartRunRequest{Location: loc, DisableTools: true})
	if err != nil {
		t.Fatalf("start_run as the client sends it: %v", err)
	}
	if _, err := s.client.Show(ctx, commands.ShowRequest{Run: info.Run}); err != nil {
		t.Errorf("show as the client sends it: %v", err)
	}
	for _, body := range []string{"", "  ", "{}", "null"} {
		if _, err := decodeRequest[commands.TicketsRequest]([]byte(body)); err != nil {
			t.Errorf("an empty request %q: %v", body, err)
		}
	}
	for _, body := range []string{`{"run":"a"} {"run":"b"}`, `{"run":1}`, `[`, `{"Run ":"a"}`} {
		if _, err := decodeRequest[commands.TicketsRequest]([]byte(body)); commands.Code(err) != commands.CodeInvalidInput {
			t.Errorf("request %q: %v, want invalid_input", body, err)
		}
	}
}

// A request decodes strictly or not at all: never a panic, and what
// decodes is what encoding/json reads, and survives a round trip.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"location":"/tmp/x","agent":"build","rules":[{"action":"bash","resource":"*","effect":"ask"}]}`,
		`{"location":"/tmp/x","disable_tools":true,"ticket_ttl":"5m"}`,
		`{"location":"/tmp/x","disabled_tools":true}`,
		`{"rules":[{"action":"bash","resource":"*","effect":"ask","sorce":"user"}]}`,
		`{} {}`, ``, `null`, `{"project":"\u0000"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := decodeRequest[commands.StartRunRequest]([]byte(body))
		if err != nil {
			if commands.Code(err) != commands.CodeInvalidInput {
				t.Fatalf("refusal %v is not invalid_input", err)
			}
			return
		}
		if strings.TrimSpace(body) != "" {
			var loose commands.StartRunRequest
			if err := json.Unmarshal([]byte(body), &loose); err != nil {
				t.Fatalf("strict decoding took %q, encoding/json refuses it: %v", body, err)
			}
			if diff := cmp.Diff(loose, got); diff != "" {
				t.Fatalf("strict and loose decoding differ (-loose +strict):\n%s", diff)
			}
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeRequest[commands.StartRunRequest](b)
		if err != nil {
			t.Fatalf("the request's own encoding %s does not decode: %v", b, err)
		}
		if diff := cmp.Diff(got, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
