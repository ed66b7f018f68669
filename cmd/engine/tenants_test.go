package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
)

// tenantsFile keeps teams apart, an account each.
const tenantsFile = "../../deploy/access/tenants.conf"

// Teams in accounts of their own share one server and nothing else: team
// b's engine has its own stream and service, and team b's agent and
// approver can neither see team a's run nor answer its ticket; team a's
// approver still sees the ticket pending.
func TestAccessTenantsApart(t *testing.T) {
	for _, role := range []string{"ENGINE", "AGENT", "APPROVER"} {
		for _, team := range []string{"A", "B"} {
			t.Setenv("STEPGATE_"+role+"_"+team+"_PASSWORD", "pw-"+strings.ToLower(role+"-"+team))
		}
	}
	g := serveAs(t, tenantsFile, "engine-a")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Team b's engine: another host, connected in its own account.
	nc, err := g.e.Server.Connect(nats.UserInfo("engine-b", "pw-engine-b"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dataB := t.TempDir()
	hostB, err := hosting.StartHost(ctx, nc, hosting.Options{Version: version(), DataDir: dataB, HostName: "hb", Log: log, TestTools: true})
	if err != nil {
		t.Fatal(err)
	}
	svcCtx, svcCancel := context.WithCancel(context.Background())
	stopB, err := serveAPI(svcCtx, nc, hostB, version(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svcCancel(); _ = stopB(); _ = hostB.Close(); nc.Close() })

	agentA, approverA := g.asRole(t, "agent-a", "agent"), g.asRole(t, "approver-a", "approver")
	agentB, approverB := g.asRole(t, "agent-b", "agent"), g.asRole(t, "approver-b", "approver")
	run, ticket := askStep(t, ctx, agentA.client)

	if _, err := agentB.client.Show(ctx, commands.ShowRequest{Run: run}); !errors.Is(err, commands.ErrRunNotFound) {
		t.Fatalf("team b's agent shows team a's run: %v, want run_not_found", err)
	}
	ts, err := approverB.client.Tickets(ctx, commands.TicketsRequest{})
	if err != nil || len(ts.Tickets) != 0 {
		t.Fatalf("team b's approver lists %+v (%v), want none", ts, err)
	}
	if _, err := approverB.client.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Run: run, Reply: "once", Principal: "approver-b"}); !errors.Is(err, commands.ErrTicketNotFound) {
		t.Fatalf("team b's approver answers team a's ticket: %v, want ticket_not_found", err)
	}
	if !pending(t, ctx, approverA, run, ticket) {
		t.Fatal("team a's ticket is no longer pending")
	}
	if _, err := agentA.client.Show(ctx, commands.ShowRequest{Run: run}); err != nil {
		t.Fatalf("team a's agent shows its run: %v", err)
	}
}
