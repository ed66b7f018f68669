package commands

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/executor/sandbox/proxy"
)

// SandboxUnavailable begins the result of a call whose sandbox could not
// be put in place; the call did not run (fail closed: never unsandboxed).
const SandboxUnavailable = "sandbox_unavailable: "

// runContained runs c under at.contain, the run's sandbox on this host.
// With the network through the proxy, the call gets a proxy of its own, on
// a unix socket only its sandbox is given, serving the run's allow-list;
// every connection it saw, allowed or refused, is recorded with the
// result. What the sandbox refused the call is said and recorded, and may
// make it ask to run outside (see sandboxRefused). Without the proxy the
// call's processes run on the host's warm helpers (sandbox.Pool): one per
// run's policy and location, serving its calls.
func (h *submitter) runContained(ctx context.Context, c *planned, at placeAt, lim executor.Limits) {
	p := *at.contain
	var px *callProxy
	if p.Network == sandbox.NetProxy {
		var err error
		if px, err = startCallProxy(ctx, p.Allow); err != nil {
			c.setResult(executor.ErrorResult(SandboxUnavailable + "the network proxy did not start: " + err.Error()))
			return
		}
		p.ProxySocket = px.socket
	}
	c.prepared.Contain(&p, h.sandboxes) // a proxy's call runs one-shot (see sandbox.Pool)
	c.run(ctx, h.store, lim)
	if c.result.Sandbox != nil {
		c.result.Sandbox.Profile = at.profile
	}
	var conns []events.NetConnection
	if px != nil {
		var dropped int
		conns, dropped = px.stop()
		if c.result.Sandbox != nil {
			c.result.Sandbox.Connections, c.result.Sandbox.Dropped = conns, dropped
		}
	}
	h.sandboxRefused(c, at, conns)
}

// callProxy is one call's network proxy.
type callProxy struct {
	socket, dir string
	cancel      context.CancelFunc
	done        chan error
	mu          sync.Mutex
	conns       []events.NetConnection
	dropped     int
}

// maxRecordedConns bounds the connections a call's result records (about
// 200 bytes each); the rest are counted.
const maxRecordedConns = 256

// startCallProxy serves allow on a unix socket in a new private directory.
func startCallProxy(ctx context.Context, allow []string) (*callProxy, error) {
	dir, err := os.MkdirTemp("", "stepgate-proxy-")
	if err != nil {
		return nil, err
	}
	cp := &callProxy{socket: filepath.Join(dir, "proxy.sock"), dir: dir, done: make(chan error, 1)}
	px, err := proxy.New(proxy.Config{Allow: allow, Record: cp.record})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("the allow-list: %w", err)
	}
	ln, err := net.Listen("unix", cp.socket)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cp.cancel = cancel
	go func() { cp.done <- px.Serve(sctx, ln) }()
	return cp, nil
}

// record keeps one connection as the result records it.
func (cp *callProxy) record(c proxy.Conn) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if len(cp.conns) == maxRecordedConns {
		cp.dropped++
		return
	}
	cp.conns = append(cp.conns, events.NetConnection{Form: c.Form, Authority: c.Authority, IP: c.IP, Verdict: string(c.Verdict),
		Code: c.Code, Reason: c.Reason, BytesUp: c.BytesUp, BytesDown: c.BytesDown})
}

// stop ends the proxy (and every connection still open: the command is
// over) and returns the connections it saw.
func (cp *callProxy) stop() ([]events.NetConnection, int) {
	cp.cancel()
	<-cp.done
	_ = os.RemoveAll(cp.dir)
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.conns, cp.dropped
}
