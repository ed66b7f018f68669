package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// sandboxTransport starts a stdio server inside the sandbox (Server.Sandbox)
// and speaks MCP over its stdin and stdout. It fails closed: a sandbox this
// host cannot put in place is the connection's error (sandbox_unavailable:
// …), and the server is not started, so its tools are unavailable.
type sandboxTransport struct {
	s   Server
	log *slog.Logger
	red *Redactor
}

// terminateWait is how long Close waits for the server to exit after its
// stdin is closed, and again after SIGTERM, before it kills it.
const terminateWait = 2 * time.Second

// Connect starts the server in its sandbox.
func (t *sandboxTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	cmd, err := sandbox.Command(*t.s.Sandbox, t.s.Command, t.s.Dir, hostPathHome(t.s.Env), sandbox.WithEnv(configured(t.s.Env)))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = newStderrLog(t.log, t.s.Name, t.red)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &sandboxedPipe{cmd: cmd, stdin: stdin, waited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.waited) }()
	return (&sdk.IOTransport{Reader: io.NopCloser(stdout), Writer: p}).Connect(ctx)
}

// sandboxedPipe is the server's stdin; closing it ends the server as the
// MCP specification says a client ends a stdio server: stdin closed, then
// SIGTERM, then SIGKILL (to the sandbox's PID 1: the kernel then kills
// every process of its PID namespace).
type sandboxedPipe struct {
	cmd    *sandbox.Cmd
	stdin  io.WriteCloser
	waited chan struct{}
	err    error // Wait's, once waited is closed
}

func (p *sandboxedPipe) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close closes stdin and waits for the server to end, ending it.
func (p *sandboxedPipe) Close() error {
	cerr := p.stdin.Close()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			_ = syscall.Kill(-p.cmd.Process.Pid, sig) // its process group: the helper and what it started
		}
		select {
		case <-p.waited:
			var exit *sandbox.Error
			if errors.As(p.err, &exit) {
				return p.err // the helper failed before the server ran
			}
			return cerr
		case <-time.After(terminateWait):
		}
	}
	return fmt.Errorf("the sandboxed server %s did not end", p.cmd.Path)
}
