package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
)

// freePorts returns n loopback ports free at the time of asking.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	return ports
}

// startCluster starts three JetStream nodes on loopback, each from a
// configuration that includes the repository's access file, and returns
// their client URLs.
func startCluster(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	access, err := os.ReadFile(accessFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accounts.conf"), access, 0o600); err != nil {
		t.Fatal(err)
	}
	client, routes := freePorts(t, 3), freePorts(t, 3)
	var urls, routeURLs []string
	var srvs []*server.Server
	for i := range 3 {
		routeURLs = append(routeURLs, fmt.Sprintf("\"nats-route://127.0.0.1:%d\"", routes[i]))
	}
	for i := range 3 {
		conf := fmt.Sprintf(`server_name: n%d
listen: 127.0.0.1:%d
max_payload: 8MB
jetstream { store_dir: %q }
cluster { name: stepgate, listen: 127.0.0.1:%d, routes: [%s] }
include "accounts.conf"
`, i, client[i], filepath.Join(dir, fmt.Sprint("n", i)), routes[i], strings.Join(routeURLs, ", "))
		p := filepath.Join(dir, fmt.Sprintf("n%d.conf", i))
		if err := os.WriteFile(p, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(p)
		if err != nil {
			t.Fatal(err)
		}
		opts.NoLog, opts.NoSigs = true, true
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		srvs = append(srvs, srv)
	}
	for i, srv := range srvs {
		if !srv.ReadyForConnections(30 * time.Second) {
			t.Fatalf("node %d not ready", i)
		}
		urls = append(urls, srv.ClientURL())
	}
	return urls
}

// On a three-node cluster whose nodes include accounts.conf, the engine
// user on one node keeps an R3 stream and serves; an agent on another node
// starts a run and is refused a write into sg.>; an approver on the third
// answers the ticket, and the agent sees the step final.
func TestAccessCluster(t *testing.T) {
	setPasswords(t)
	urls := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cf := connFlags{natsURL: urls[0], user: "engine", password: "pw-engine"}
	nc, err := cf.dialServe(log)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var host *commands.Host
	data := t.TempDir()
	for host == nil { // the cluster elects its JetStream leader first
		actx, acancel := context.WithTimeout(ctx, 2*time.Second) // a request before the election is not answered
		host, err = hosting.StartHost(actx, nc, hosting.Options{Version: version(), DataDir: data, HostName: "h1", Log: log, TestTools: true, Replicas: 3})
		acancel()
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("start host on the cluster: %v", err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	defer host.Close()
	svcCtx, svcCancel := context.WithCancel(context.Background())
	stop, err := serveAPI(svcCtx, nc, host, version(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { svcCancel(); _ = stop() }()

	dial := func(url, user string) *role {
		r := &role{errs: make(chan error, 64)}
		if r.nc, err = nats.Connect(url, nats.UserInfo(user, "pw-"+user), nats.CustomInboxPrefix("_INBOX."+user),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
				select {
				case r.errs <- err:
				default:
				}
			})); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.nc.Close)
		r.client = newClient(r.nc, 0)
		return r
	}
	agent, approver := dial(urls[1], "agent"), dial(urls[2], "approver")
	run, ticket := askStep(t, ctx, agent.client)
	last, err := host.Log.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.nc.Publish("sg.run."+run, []byte(`{"forged":true}`)); err != nil {
		t.Fatal(err)
	}
	agent.refused(t, "sg.run."+run)
	if _, err := agent.client.Reply(brief(t, ctx), commands.ReplyRequest{Ticket: ticket, Run: run, Reply: "once", Principal: "agent"}); err == nil {
		t.Fatal("the agent replied to its own ticket")
	}
	agent.refused(t, "stepgate.reply")
	if now, err := host.Log.LastSeq(ctx); err != nil || now != last {
		t.Fatalf("stream last sequence %d (%v), was %d", now, err, last)
	}
	if !pending(t, ctx, approver, run, ticket) {
		t.Fatal("the ticket is no longer pending")
	}
	if _, err := approver.client.Reply(ctx, commands.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "approver"}); err != nil {
		t.Fatalf("approver reply: %v", err)
	}
	out, err := agent.client.AwaitStep(ctx, commands.AwaitRequest{Run: run, Step: 1, Timeout: "30s"})
	if err != nil || !out.Final {
		t.Fatalf("agent await_step after the approval: %+v %v", out, err)
	}
}
