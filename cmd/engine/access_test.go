package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step"
)

// accessFile is the repository's ready access configuration.
const accessFile = "../../deploy/access/accounts.conf"

// guarded is an embedded engine that enforces accessFile, serving the
// stepgate service as the engine user.
type guarded struct {
	e *hosting.Embedded
}

// setPasswords sets the passwords accessFile reads from the environment.
func setPasswords(t *testing.T) {
	for _, role := range []string{"ENGINE", "AGENT", "APPROVER", "OPERATOR"} {
		t.Setenv("STEPGATE_"+role+"_PASSWORD", "pw-"+strings.ToLower(role))
	}
}

func serveGuarded(t *testing.T) *guarded {
	t.Helper()
	setPasswords(t)
	return serveAs(t, accessFile, "engine")
}

// serveAs starts an embedded engine enforcing file, its host connected as
// engineUser (password "pw-" and the name).
func serveAs(t *testing.T, file, engineUser string) *guarded {
	t.Helper()
	return serveAsOn(t, file, engineUser, "")
}

// serveAsOn is serveAs with the embedded server listening on listen too
// ("" for no listener), for clients of other connections (the CLI).
func serveAsOn(t *testing.T, file, engineUser, listen string) *guarded {
	t.Helper()
	return serveBoundTo(t, file, engineUser, listen, nil)
}

// serveBoundTo is serveAsOn serving the API bound to principals when bind
// is set.
func serveBoundTo(t *testing.T, file, engineUser, listen string, bind *service.Binding) *guarded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := startEmbedded(ctx, hosting.Options{DataDir: t.TempDir(), HostName: "h1", Log: log, TestTools: true, Listen: listen,
		AuthFile: file, ClientOptions: []nats.Option{nats.UserInfo(engineUser, "pw-"+engineUser)}})
	if err != nil {
		t.Fatal(err)
	}
	svcCtx, svcCancel := context.WithCancel(context.Background())
	stop, err := serveAPIBound(svcCtx, e.Conn, e.Host, version(), log, bind)
	if err != nil {
		svcCancel()
		_ = e.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		svcCancel()
		if err := stop(); err != nil {
			t.Error(err)
		}
		_ = e.Close()
	})
	return &guarded{e: e}
}

// role is a client connected as one of accessFile's users, with the
// server's asynchronous errors (permission violations) on errs.
type role struct {
	nc     *nats.Conn
	client *client
	errs   chan error
}

func (g *guarded) as(t *testing.T, user string) *role {
	t.Helper()
	return g.asRole(t, user, user)
}

// asRole connects as user, with the inbox prefix of its role.
func (g *guarded) asRole(t *testing.T, user, roleName string) *role {
	t.Helper()
	r := &role{errs: make(chan error, 64)}
	var err error
	r.nc, err = g.e.Server.Connect(nats.UserInfo(user, "pw-"+user), nats.CustomInboxPrefix("_INBOX."+roleName),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case r.errs <- err:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.nc.Close)
	r.client = newClient(r.nc, 0)
	return r
}

// brief bounds a request the server refuses: no answer ever comes.
func brief(t *testing.T, ctx context.Context) context.Context {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// refused waits for the server's permission violation naming subject.
func (r *role) refused(t *testing.T, subject string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case err := <-r.errs:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), `"`+subject+`"`) {
				return
			}
		case <-timeout:
			t.Fatalf("no permission violation for %s", subject)
		}
	}
}

func pending(t *testing.T, ctx context.Context, approver *role, run, ticket string) bool {
	t.Helper()
	ts, err := approver.client.Tickets(ctx, commands.TicketsRequest{Run: run})
	if err != nil {
		t.Fatalf("approver tickets: %v", err)
	}
	for _, tv := range ts.Tickets {
		if tv.ID == ticket {
			return tv.Resolution == nil
		}
	}
	t.Fatalf("ticket %s not listed: %+v", ticket, ts)
	return false
}

// An agent starts a run and submits a step; it cannot answer its own
// ticket, write into the stream or the engine hosts' lease bucket, or
// delete from the stream through the JetStream API; the server refuses each, and the log and the ticket are as they
// were. The approver lists the ticket and allows it, and the agent's
// await_step sees the step final: the engine user served it all.
func TestAccessRoles(t *testing.T) {
	g := serveGuarded(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agent, approver := g.as(t, "agent"), g.as(t, "approver")
	run, ticket := askStep(t, ctx, agent.client)

	_, err := agent.client.Reply(brief(t, ctx), commands.ReplyRequest{Ticket: ticket, Run: run, Reply: "once", Principal: "agent"})
	if err == nil {
		t.Fatal("the agent replied to its own ticket")
	}
	agent.refused(t, "stepgate.reply")
	if !pending(t, ctx, approver, run, ticket) {
		t.Fatal("the agent's refused reply resolved its ticket")
	}
	if _, err := agent.client.Tickets(brief(t, ctx), commands.TicketsRequest{Run: run}); err == nil {
		t.Fatal("the agent listed tickets")
	}
	agent.refused(t, "stepgate.tickets")

	last, err := g.e.Host.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.nc.Publish("sg.run."+run, []byte(`{"forged":true}`)); err != nil {
		t.Fatal(err)
	}
	agent.refused(t, "sg.run."+run)
	del, _ := json.Marshal(map[string]uint64{"seq": last})
	if _, err := agent.nc.Request("$JS.API.STREAM.MSG.DELETE."+step.DefaultStream, del, 500*time.Millisecond); err == nil {
		t.Fatal("the JetStream API answered the agent")
	}
	agent.refused(t, "$JS.API.STREAM.MSG.DELETE."+step.DefaultStream)
	// Nor can it take the engine's lease over (which would stop the engine
	// from starting calls until it held it again).
	leases, err := step.OpenLeases(ctx, mustJS(t, g.e.Conn), g.e.Host.Log)
	if err != nil {
		t.Fatal(err)
	}
	held, err := leases.Get(ctx, g.e.HostName)
	if err != nil {
		t.Fatal(err)
	}
	leaseSubject := "$KV." + leases.Bucket() + "." + step.LeaseKey(g.e.HostName)
	forged, _ := step.EncodeLease(step.Lease{Host: g.e.HostName, State: step.LeaseTaken, By: "agent"})
	if err := agent.nc.Publish(leaseSubject, forged); err != nil {
		t.Fatal(err)
	}
	agent.refused(t, leaseSubject)
	if now, err := leases.Get(ctx, g.e.HostName); err != nil || now.By != g.e.HostName || now.Revision < held.Revision {
		t.Fatalf("the engine's lease after the agent's forged takeover: %+v, %v", now, err)
	}
	if _, err := agent.nc.SubscribeSync("stepgate.submit_step"); err != nil {
		t.Fatal(err)
	}
	agent.refused(t, "stepgate.submit_step") // it cannot stand in for the engine
	if _, err := agent.nc.SubscribeSync("_INBOX.approver.>"); err != nil {
		t.Fatal(err)
	}
	agent.refused(t, "_INBOX.approver.>") // nor read another role's answers
	if now, err := g.e.Host.Log.LastSeq(ctx); err != nil || now != last {
		t.Fatalf("stream last sequence %d (%v), was %d", now, err, last)
	}
	js, err := jetstream.New(g.e.Conn) // the engine's own view
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.GetMsg(ctx, last); err != nil {
		t.Fatalf("message %d after the agent's delete: %v", last, err)
	}

	if _, err := approver.client.SubmitStep(brief(t, ctx), commands.SubmitStepRequest{Run: run, Step: 2}); err == nil {
		t.Fatal("the approver submitted a step")
	}
	approver.refused(t, "stepgate.submit_step")
	if _, err := approver.client.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "approver"}); err != nil {
		t.Fatalf("approver reply: %v", err)
	}
	out, err := agent.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1, Timeout: "30s"})
	if err != nil || !out.Final {
		t.Fatalf("agent await_step after the approval: %+v %v", out, err)
	}
	if _, err := agent.client.EndRun(ctx, commands.EndRunRequest{Run: run}); err != nil {
		t.Fatalf("agent end_run: %v", err)
	}
	// Both see the run's timeline: engine show asks show and run_facts.
	for name, r := range map[string]*role{"agent": agent, "approver": approver} {
		if d, err := showRun(ctx, r.client, run); err != nil || !d.Timeline.Timed {
			t.Errorf("%s: engine show: %v", name, err)
		}
	}
}

// `engine serve --auth` enforces the file on its listener and serves as
// the engine user: an anonymous connection is refused, an agent with its
// inbox prefix (--inbox-prefix) starts a run and is answered, and --auth
// with --nats is refused (the servers load the file themselves).
func TestServeAuth(t *testing.T) {
	setPasswords(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--test-tools",
			"--auth", accessFile, "--user", "engine", "--password", "pw-engine"}, w, io.Discard)
		_ = w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed %q: %v (serve: %v)", line, err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	url, _, _ := strings.Cut(strings.TrimPrefix(line, "stepgate serving on "), ",")
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	if nc, err := nats.Connect(url); err == nil || !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("anonymous connection to %s: %v, want an authorization violation", url, err)
	}
	cf := connFlags{natsURL: url, user: "agent", password: "pw-agent", inbox: "_INBOX.agent"}
	c, err := cf.dialClient(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	askStep(t, ctx, c)

	err = run(ctx, []string{"serve", "--data", t.TempDir(), "--nats", url, "--auth", accessFile}, io.Discard, io.Discard)
	if !errors.Is(err, errAuthWithNATS) {
		t.Fatalf("serve --nats --auth: %v, want %v", err, errAuthWithNATS)
	}
}

// A request a client sends twice to one inbox (as it does after a
// reconnect) is answered: the engine's answers are not limited to one per
// reply subject (allow_responses would refuse both answers here).
func TestAccessRequestSentTwice(t *testing.T) {
	g := serveGuarded(t)
	agent := g.as(t, "agent")
	inbox := agent.nc.NewInbox()
	answers := make(chan *nats.Msg, 2)
	sub, err := agent.nc.ChanSubscribe(inbox, answers)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	body, _ := json.Marshal(commands.ShowRequest{Run: "no-such-run"})
	for range 2 {
		if err := agent.nc.PublishRequest(subjectPrefix+"."+epShow, inbox, body); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(5 * time.Second)
	for n := range 2 {
		select {
		case <-answers:
		case err := <-agent.errs:
			t.Fatalf("answer %d: %v", n+1, err)
		case <-timeout:
			t.Fatalf("%d of 2 answers", n)
		}
	}
}

// mustJS is JetStream on nc.
func mustJS(t *testing.T, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// serveAPIBound is serveAPI binding runs to principals when bind is set
// (see service.ServeBound), as a served host's service does.
func serveAPIBound(ctx context.Context, nc *nats.Conn, h *commands.Host, version string, log *slog.Logger, bind *service.Binding) (stop func() error, err error) {
	if bind == nil {
		return serveAPI(ctx, nc, h, version, log)
	}
	return service.ServeBound(ctx, nc, h, version, log, *bind)
}
