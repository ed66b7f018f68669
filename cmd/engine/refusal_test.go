package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
)

// patient is a request timeout no refusal test reaches: a refused request
// that comes back at all came back because the server refused it, not
// because it timed out.
const patient = 10 * time.Minute

// A request the NATS server refuses for permissions fails at once with
// permission_denied, naming the subject and the user, while its own
// timeout is ten minutes: the agent role asking stepgate.tickets (through
// the Go client and through `engine tickets`, which exits 77), and an agent
// that forgot its inbox prefix (its answer inbox is refused).
func TestAccessRefusalSaysSo(t *testing.T) {
	setPasswords(t)
	g := serveAsOn(t, accessFile, "engine", "127.0.0.1:0")
	url := g.e.Server.ClientURL()
	ctx, cancel := context.WithTimeout(context.Background(), patient)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	agent := connFlags{natsURL: url, user: "agent", password: "pw-agent", inbox: "_INBOX.agent", timeout: patient}
	c, err := agent.dialClient(quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Tickets(ctx, commands.TicketsRequest{})
	if !errors.Is(err, sgclient.ErrPermissionDenied) || sgclient.Code(err) != sgclient.CodePermissionDenied ||
		!strings.Contains(err.Error(), "stepgate.tickets") || !strings.Contains(err.Error(), `"agent"`) {
		t.Fatalf("the agent's tickets: %v (code %q), want permission_denied naming stepgate.tickets and user agent", err, sgclient.Code(err))
	}
	t.Logf("Go client: %v", err)
	// What the role may ask still works on the same connection.
	askStep(t, ctx, c)

	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"tickets", "--nats", url, "--user", "agent", "--password", "pw-agent",
		"--inbox-prefix", "_INBOX.agent", "--timeout", patient.String()}, &stdout, &stderr)
	if exitCode(err) != exitNoPerm || !strings.Contains(err.Error(), "permission_denied") || !strings.Contains(err.Error(), "stepgate.tickets") {
		t.Fatalf("engine tickets as agent: %v (exit %d), want permission_denied and exit %d; stderr %s", err, exitCode(err), exitNoPerm, stderr.String())
	}

	t.Logf("engine tickets: %v (exit %d)", err, exitCode(err))
	forgot := agent
	forgot.inbox = ""
	c2, err := forgot.dialClient(quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.Show(ctx, commands.ShowRequest{Run: "no-such-run"})
	if !errors.Is(err, sgclient.ErrPermissionDenied) || !strings.Contains(err.Error(), "answers come back on _INBOX.") ||
		!strings.Contains(err.Error(), "--inbox-prefix _INBOX.<role>") || !strings.Contains(err.Error(), `"agent"`) {
		t.Fatalf("show without the inbox prefix: %v, want permission_denied naming the inbox", err)
	}
	t.Logf("without the inbox prefix: %v", err)
}
