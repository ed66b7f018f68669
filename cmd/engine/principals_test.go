package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
)

// principalsFile binds runs to the agents that start them, an account each.
const principalsFile = "../../deploy/access/principals.conf"

// serveBound starts an embedded engine enforcing principalsFile and
// serving with --bind-runs and overseers (as serve's --overseer takes
// them).
func serveBound(t *testing.T, overseers ...string) *guarded {
	t.Helper()
	for _, user := range []string{"engine", "agent-a", "agent-b", "approver", "approver-web", "operator"} {
		t.Setenv("STEPGATE_"+strings.ToUpper(strings.ReplaceAll(user, "-", "_"))+"_PASSWORD", "pw-"+user)
	}
	var b bindFlags
	fs := newFlags("serve", io.Discard)
	b.register(fs)
	args := []string{"-bind-runs"}
	for _, o := range overseers {
		args = append(args, "-overseer", o)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	binding, err := b.binding()
	if err != nil {
		t.Fatal(err)
	}
	return serveBoundTo(t, principalsFile, "engine", "", binding)
}

// askIn is askStep with the run in project.
func askIn(t *testing.T, ctx context.Context, api engineAPI, project string) (run, ticket string) {
	t.Helper()
	info, err := api.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: project,
		Rules: []gate.Rule{{Action: "bash", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"command": "echo released"})
	out, err := api.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: "bash", Args: args}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Final || len(out.Tickets) != 1 {
		t.Fatalf("step 1 = %+v, want one ticket", out)
	}
	return info.Run, out.Tickets[0].ID
}

// runEndpoints calls, as api, the endpoints named (every endpoint that
// names run or its ticket, when none is), each with what it needs, and
// returns each one's error by endpoint.
func runEndpoints(ctx context.Context, api engineAPI, run, ticket string, names ...string) map[string]error {
	args, _ := json.Marshal(map[string]string{"command": "echo hijacked"})
	calls := map[string]func() error{
		"materialize": func() error { _, err := api.Materialize(ctx, commands.MaterializeRequest{Run: run}); return err },
		"submit_step": func() error {
			_, err := api.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: 2,
				Calls: []commands.CallRequest{{ID: "c2", Tool: "bash", Args: args}}})
			return err
		},
		"await_step": func() error {
			_, err := api.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1, Timeout: "1s"})
			return err
		},
		"show":      func() error { _, err := api.Show(ctx, commands.ShowRequest{Run: run}); return err },
		"run_facts": func() error { _, err := api.RunFacts(ctx, commands.RunFactsRequest{Run: run}); return err },
		"tickets":   func() error { _, err := api.Tickets(ctx, commands.TicketsRequest{Run: run}); return err },
		"fork":      func() error { _, err := api.Fork(ctx, commands.ForkRequest{Run: run, At: 1}); return err },
		"reply": func() error {
			_, err := api.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "nats:AGENT_A/agent-a"})
			return err
		},
		"end_run": func() error {
			_, err := api.EndRun(ctx, commands.EndRunRequest{Run: run, Reason: "hijacked"})
			return err
		},
	}
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(calls))
	}
	got := map[string]error{}
	for _, name := range names {
		got[name] = calls[name]()
	}
	return got
}

// wantNotFound checks that every endpoint answered as if the run did not
// exist: run_not_found, and ticket_not_found for the reply.
func wantNotFound(t *testing.T, who string, got map[string]error) {
	t.Helper()
	for name, err := range got {
		want := commands.ErrRunNotFound
		if name == "reply" {
			want = commands.ErrTicketNotFound
		}
		if !errors.Is(err, want) {
			t.Errorf("%s %s on a run not its own: %v, want %v", who, name, err, want)
		}
	}
}

// agentEndpoints are the endpoints the AGENT role may call.
var agentEndpoints = []string{"materialize", "submit_step", "await_step", "show", "run_facts", "end_run"}

// Two agents with NATS users of their own, in accounts of their own that
// import the engine's service with share: true: agent b gets run_not_found
// on every endpoint it may call for agent a's run — also when it writes
// agent a's identity into Nats-Request-Info itself — and agent a's run is
// as it was; agent a goes on with it. An approver limited to project web
// sees the run of web and not the other; an operator sees both. A run
// started with no principal (before runs were bound) is an overseer's only.
func TestBoundRunsAreTheirPrincipals(t *testing.T) {
	g := serveBound(t, "nats:OPERATORS", "nats:APPROVERS_WEB/approver-web=web")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agentA, agentB := g.asRole(t, "agent-a", "agent"), g.asRole(t, "agent-b", "agent")
	web, operator := g.asRole(t, "approver-web", "approver"), g.as(t, "operator")

	run, ticket := askIn(t, ctx, agentA.client, "api")
	before, err := operator.client.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatalf("the operator shows agent a's run: %v", err)
	}
	if before.Snapshot.Principal != "nats:AGENT_A/agent-a" {
		t.Errorf("agent a's run records principal %q, want nats:AGENT_A/agent-a", before.Snapshot.Principal)
	}

	wantNotFound(t, "agent b", runEndpoints(ctx, agentB.client, run, ticket, agentEndpoints...))
	// The role's other endpoints are the server's to refuse: agent b never
	// reaches the engine with them.
	if _, err := agentB.client.Tickets(brief(t, ctx), commands.TicketsRequest{Run: run}); err == nil {
		t.Fatal("agent b listed tickets")
	}
	agentB.refused(t, "stepgate.tickets")

	// Agent b writes agent a's identity into the header: the server
	// replaces it on the way through the import.
	forged := nats.Header{}
	forged.Set(service.RequestInfoHeader, `{"acc":"AGENT_A","user":"agent-a"}`)
	body, _ := json.Marshal(commands.ShowRequest{Run: run})
	msg, err := agentB.nc.RequestMsgWithContext(ctx, &nats.Msg{Subject: "stepgate.show", Header: forged, Data: body})
	if err != nil {
		t.Fatal(err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != commands.CodeRunNotFound {
		t.Fatalf("agent b's show with agent a's forged Nats-Request-Info: code %q (%s), want run_not_found", code, msg.Data)
	}

	// The approver of web only: not this run of api, its ticket or its
	// listing; the ticket is still pending.
	wantNotFound(t, "approver-web", runEndpoints(ctx, web.client, run, ticket, "show", "run_facts", "tickets", "reply"))
	if !pending(t, ctx, operator, run, ticket) {
		t.Fatal("agent a's ticket is no longer pending")
	}
	if after, err := operator.client.Show(ctx, commands.ShowRequest{Run: run}); err != nil || after.Commits != before.Commits || after.Status != before.Status {
		t.Fatalf("agent a's run after the others' attempts: %d commits, %s (%v); want %d, %s", after.Commits, after.Status, err, before.Commits, before.Status)
	}

	// Agent a goes on: the operator approves, agent a awaits, materializes
	// and ends its run.
	res, err := operator.client.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "someone else"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome == nil || !res.Outcome.Final {
		t.Fatalf("the operator's reply: %+v", res)
	}
	if _, err := agentA.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1}); err != nil {
		t.Fatalf("agent a awaits its step: %v", err)
	}
	for _, call := range []func() error{
		func() error {
			_, err := agentA.client.Materialize(ctx, commands.MaterializeRequest{Run: run})
			return err
		},
		func() error { _, err := agentA.client.RunFacts(ctx, commands.RunFactsRequest{Run: run}); return err },
		func() error { _, err := agentA.client.EndRun(ctx, commands.EndRunRequest{Run: run}); return err },
	} {
		if err := call(); err != nil {
			t.Fatalf("agent a on its own run: %v", err)
		}
	}
	shown, err := agentA.client.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if r := shown.Tickets[0].Resolution; r == nil || r.Principal != "nats:OPERATORS/operator" {
		t.Fatalf("the reply records %+v, want the server's principal nats:OPERATORS/operator", r)
	}

	// The approver of web sees a run of web, and answers its ticket.
	webRun, webTicket := askIn(t, ctx, agentB.client, "web")
	if !pending(t, ctx, web, webRun, webTicket) {
		t.Fatal("the web run's ticket is not pending")
	}
	if _, err := agentA.client.Show(ctx, commands.ShowRequest{Run: webRun}); !errors.Is(err, commands.ErrRunNotFound) {
		t.Fatalf("agent a shows agent b's run: %v", err)
	}
	if _, err := web.client.Reply(ctx, commands.ReplyRequest{Ticket: webTicket, Reply: "reject", Message: "no", Principal: "x"}); err != nil {
		t.Fatalf("the approver of web answers a ticket of web: %v", err)
	}

	// A run that records no principal, as one started before runs were
	// bound: nobody's but an overseer's.
	old, oldTicket := askIn(t, ctx, commands.Wire{Host: g.e.Host}, "api")
	wantNotFound(t, "agent a", runEndpoints(ctx, agentA.client, old, oldTicket, agentEndpoints...))
	if _, err := operator.client.Show(ctx, commands.ShowRequest{Run: old}); err != nil {
		t.Fatalf("the operator shows a run without principal: %v", err)
	}
	runs, err := web.client.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].ID != webRun {
		t.Fatalf("the approver of web lists %+v, want only %s", runs, webRun)
	}
}

// The engine's account holds the engine alone, and the engine may not
// request its own service: nobody can reach the service without the
// server's Nats-Request-Info, so nobody can write that header. The export
// keeps a request's way back for the longest await_step.
func TestBoundEngineAccountCannotRequest(t *testing.T) {
	g := serveBound(t)
	fo, err := server.ProcessConfigFile(principalsFile)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, acc := range fo.Accounts {
		if acc.Name != "STEPGATE" {
			continue
		}
		found = true
		if users := usersOf(fo.Users, acc.Name); len(users) != 1 || users[0] != "engine" {
			t.Errorf("the engine's account holds %v, want the engine alone", users)
		}
		if d, err := acc.ServiceExportResponseThreshold("stepgate.>"); err != nil || d < commands.MaxAwaitTimeout {
			t.Errorf("the export's response threshold: %s (%v), want at least %s", d, err, commands.MaxAwaitTimeout)
		}
	}
	if !found {
		t.Fatalf("%s has no account STEPGATE", principalsFile)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	engine := g.asRole(t, "engine", "engine")
	if _, err := engine.client.Show(brief(t, ctx), commands.ShowRequest{Run: "01JDZ0000000000000000000RR"}); err == nil {
		t.Fatal("the engine user requested the service")
	}
	engine.refused(t, "stepgate.show")
}

// --overseer means nothing without --bind-runs, and --bind-runs nothing on
// an embedded server without accounts: both are refused before anything
// starts.
func TestBindFlagsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"--overseer", "nats:OPERATORS"}, errOverseerUnbound},
		{[]string{"--bind-runs"}, errBindWithoutAuth},
	} {
		err := run(ctx, append([]string{"serve", "--data", t.TempDir(), "--listen", ""}, tc.args...), io.Discard, io.Discard)
		if !errors.Is(err, tc.want) {
			t.Errorf("serve %v: %v, want %v", tc.args, err, tc.want)
		}
	}
}

// usersOf names the users of account.
func usersOf(users []*server.User, account string) []string {
	var out []string
	for _, u := range users {
		if u.Account != nil && u.Account.Name == account {
			out = append(out, u.Username)
		}
	}
	return out
}
