package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/commands"
)

// The principal is read from the server's Nats-Request-Info: its account
// and, when the import shares it, its user; anything else names nobody.
func TestPrincipalFromRequestInfo(t *testing.T) {
	for _, tc := range []struct {
		why, header, want string
	}{
		{"an import with share: true", `{"acc":"AGENT_A","user":"agent-a","server":"s1","id":7}`, "nats:AGENT_A/agent-a"},
		{"an import without share: the account only", `{"acc":"AGENT_A","rtt":1000}`, "nats:AGENT_A"},
		{"no header: a client of the engine's own account", "", ""},
		{"not JSON", `acc=AGENT_A`, ""},
		{"no account", `{"user":"agent-a"}`, ""},
		{"an account with a slash would be ambiguous", `{"acc":"A/B","user":"c"}`, ""},
		{"a control character", `{"acc":"A","user":"a\nb"}`, ""},
	} {
		h := nats.Header{}
		if tc.header != "" {
			h.Set(service.RequestInfoHeader, tc.header)
		}
		if got := service.PrincipalFromRequestInfo(h); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.why, got, tc.want)
		}
	}
}

// --overseer's forms, and what is refused.
func TestParseOverseer(t *testing.T) {
	for _, tc := range []struct {
		in       string
		ok       bool
		projects int
	}{
		{"nats:OPERATORS", true, 0},
		{"nats:APPROVERS/approver-web=web,api", true, 2},
		{"nats:APPROVERS=web", true, 1},
		{"OPERATORS", false, 0},
		{"nats:", false, 0},
		{"nats:A/", false, 0},
		{"nats:A=web,,api", false, 0},
		{"nats:A=", false, 0},
		{"nats:A B", false, 0},
	} {
		o, err := service.ParseOverseer(tc.in)
		if (err == nil) != tc.ok || (err == nil && len(o.Projects) != tc.projects) {
			t.Errorf("ParseOverseer(%q) = %+v, %v; want ok %v with %d projects", tc.in, o, err, tc.ok, tc.projects)
		}
		if err != nil && !errors.Is(err, commands.ErrInvalidRequest) {
			t.Errorf("ParseOverseer(%q): %v, want invalid_input", tc.in, err)
		}
	}
}

// A service that binds runs, reached without the server's
// Nats-Request-Info (a client in the engine's own account, which the
// deployment has none of): the request is nobody's — it may start no run
// and sees none.
func TestBoundRequestWithoutRequestInfoIsNobodys(t *testing.T) {
	e, err := servicetest.StartBound(service.Binding{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := commands.Wire{Host: e.Host}.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c := client.New(nc)
	if _, err := c.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()}); !errors.Is(err, commands.ErrInvalidRequest) {
		t.Errorf("start_run without Nats-Request-Info: %v, want invalid_input", err)
	}
	if _, err := c.Show(ctx, commands.ShowRequest{Run: run.Run}); !errors.Is(err, commands.ErrRunNotFound) {
		t.Errorf("show without Nats-Request-Info: %v, want run_not_found", err)
	}
	if runs, err := c.Runs(ctx); err != nil || len(runs) != 0 {
		t.Errorf("runs without Nats-Request-Info: %+v (%v), want none", runs, err)
	}
}
