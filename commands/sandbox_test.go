package commands_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// sandboxHost is a host whose rules allow everything and whose
// configuration's sandbox is profile; floor is the host's --sandbox.
func sandboxHost(t *testing.T, s *steptest.Server, profile, floor config.SandboxProfile) *commands.Host {
	t.Helper()
	return startHostCfg(t, s, registry(t, &counter{}), commands.Config{Host: "sb-" + floor.Mode, Sandbox: floor,
		Policy: func(string, string) commands.Policy {
			return commands.Policy{Rules: gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceUser}}, Sandbox: profile}
		}})
}

// escape is a bash call that writes inside the location and outside it.
func escape(outside string) commands.CallRequest {
	return call("b", "bash", builtin.BashInput{Command: "echo in > inside.txt; echo out > " + filepath.Join(outside, "escaped") + "; echo done"})
}

// A run pins the sandbox its configuration gives (or the host's floor), and
// its bash calls run in it: the write inside the location lands, the one
// outside does not, and the result records what was enforced. The same
// call with the sandbox off writes outside (the positive control).
func TestSandboxedRunContainsItsCommands(t *testing.T) {
	s := steptest.Start(t, "")
	ww := config.SandboxProfile{Mode: config.SandboxWorkspaceWrite}
	for _, tt := range []struct {
		why            string
		profile, floor config.SandboxProfile
		contained      bool
	}{
		{"off: the host user's authority", config.SandboxProfile{}, config.SandboxProfile{}, false},
		{"the configuration's workspace-write", ww, config.SandboxProfile{}, true},
		{"the host's floor, the configuration off", config.SandboxProfile{Mode: config.SandboxOff}, ww, true},
	} {
		t.Run(tt.why, func(t *testing.T) {
			h := sandboxHost(t, s, tt.profile, tt.floor)
			loc, outside := t.TempDir(), t.TempDir()
			run := startIn(t, h, loc, "")
			out := submit(t, h, run, 1, escape(outside))
			_, err := os.Stat(filepath.Join(outside, "escaped"))
			if escaped := err == nil; escaped == tt.contained {
				t.Fatalf("wrote outside the location: %v, want %v; result %q", escaped, !tt.contained, out.Results[0].Content)
			}
			if _, err := os.Stat(filepath.Join(loc, "inside.txt")); err != nil {
				t.Errorf("the write inside the location: %v (result %q)", err, out.Results[0].Content)
			}
			shown, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
			if err != nil {
				t.Fatal(err)
			}
			rec := shown.Steps[0].Calls[0].Result.Sandbox
			switch {
			case !tt.contained && (rec != nil || shown.Snapshot.Sandbox != nil):
				t.Errorf("an unsandboxed run records a sandbox: %+v, %+v", shown.Snapshot.Sandbox, rec)
			case tt.contained && (shown.Snapshot.Sandbox == nil || shown.Snapshot.Sandbox.Mode != config.SandboxWorkspaceWrite):
				t.Errorf("the run pins %+v, want workspace-write", shown.Snapshot.Sandbox)
			case tt.contained && (rec == nil || rec.Mode != "workspace-write" || rec.Network != "off" || rec.LandlockABI < 1 || !rec.Seccomp || !slices.Contains(rec.Namespaces, "net")):
				t.Errorf("the result records %+v, want workspace-write, no network, Landlock, seccomp and namespaces", rec)
			}
		})
	}
}

// A host that cannot put the sandbox in place refuses the call, saying what
// is missing; the command never runs unsandboxed.
func TestSandboxUnavailableRefusesTheCall(t *testing.T) {
	t.Setenv("STEPGATE_SANDBOX_TEST_NO_LANDLOCK", "1") // the sandbox package's test switch: Landlock counts as missing
	s := steptest.Start(t, "")
	h := sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite}, config.SandboxProfile{})
	loc, outside := t.TempDir(), t.TempDir()
	out := submit(t, h, startIn(t, h, loc, ""), 1, escape(outside))
	r := out.Results[0]
	if !r.IsError || !strings.Contains(r.Content, "sandbox_unavailable") || !strings.Contains(r.Content, "Landlock") {
		t.Errorf("result %+v, want an error saying sandbox_unavailable and naming Landlock", r)
	}
	for _, p := range []string{filepath.Join(loc, "inside.txt"), filepath.Join(outside, "escaped")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: the command ran", p)
		}
	}
}

// listener is a loopback TCP server that keeps what each connection sent.
type listener struct {
	addr string
	mu   sync.Mutex
	got  []string
}

func listen(t *testing.T, answer string) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	l := &listener{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				buf := make([]byte, 4096)
				n, _ := c.Read(buf)
				l.mu.Lock()
				l.got = append(l.got, string(buf[:n]))
				l.mu.Unlock()
				_, _ = io.WriteString(c, answer)
			}()
		}
	}()
	return l
}

func (l *listener) port() string { _, p, _ := net.SplitHostPort(l.addr); return p }

func (l *listener) received() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// Under network proxy a sandboxed command reaches the listed hosts and
// nothing else, through a proxy of its call's own, and the result records
// each connection: a listed host through absolute-form and through
// CONNECT, an unlisted one refused, an IP literal refused, and a CONNECT
// sent inside a CONNECT's tunnel reaching the tunnel's own upstream only.
func TestSandboxedNetworkThroughTheProxy(t *testing.T) {
	for _, tool := range []string{"curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: apt-get install -y %s", tool, tool)
		}
	}
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n"
	listed, tunnel, unlisted := listen(t, ok), listen(t, "inner\n"), listen(t, ok)
	s := steptest.Start(t, "")
	h := sandboxHost(t, s, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite, Network: config.NetworkProxy,
		Allow: []string{"localhost:" + listed.port(), "localhost:" + tunnel.port()}}, config.SandboxProfile{})
	loc := t.TempDir()
	script := fmt.Sprintf(`import os, socket
host, port = os.environ["http_proxy"].rsplit("/", 1)[-1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n")
print("outer:", s.recv(4096).split(b"\r\n")[0].decode())
s.sendall(b"CONNECT localhost:%s HTTP/1.1\r\n\r\n")
print("inner:", s.recv(4096).decode().strip())
`, tunnel.port(), tunnel.port(), unlisted.port())
	if err := os.WriteFile(filepath.Join(loc, "nested.py"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := strings.Join([]string{
		"echo absolute: $(curl -s http://localhost:" + listed.port() + "/a)",
		"echo connect: $(curl -s -p http://localhost:" + listed.port() + "/c)",
		"echo unlisted: $(curl -s -o /dev/null -w '%{http_code}' http://localhost:" + unlisted.port() + "/)",
		"echo literal: $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" + listed.port() + "/)",
		"echo direct: $(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' http://127.0.0.1:" + unlisted.port() + "/ || echo refused)",
		"python3 nested.py",
	}, "; ")
	run := startIn(t, h, loc, "")
	out := submit(t, h, run, 1, call("n", "bash", builtin.BashInput{Command: cmd}))
	text := out.Results[0].Content
	for _, want := range []string{"absolute: hello", "connect: hello", "unlisted: 403", "literal: 403", "direct: 000", "outer: HTTP/1.1 200", "inner: inner"} {
		if !strings.Contains(text, want) {
			t.Errorf("the command printed no %q:\n%s", want, text)
		}
	}
	if got := unlisted.received(); len(got) != 0 {
		t.Errorf("the unlisted host was reached %d times: %q", len(got), got)
	}
	if got := tunnel.received(); len(got) != 1 || !strings.HasPrefix(got[0], "CONNECT localhost:"+unlisted.port()) {
		t.Errorf("the tunnel's upstream received %q, want the inner CONNECT, as bytes", got)
	}
	shown, err := h.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	rec := shown.Steps[0].Calls[0].Result.Sandbox
	if rec == nil || rec.Network != "proxy" {
		t.Fatalf("the result records %+v, want the proxy", rec)
	}
	verdicts := map[string]int{}
	for _, c := range rec.Connections {
		verdicts[c.Verdict+" "+c.Code]++
	}
	if verdicts["allowed "] != 3 || verdicts["refused not_allowed"] != 1 || verdicts["refused ip_literal"] != 1 {
		t.Errorf("recorded connections %+v (%v), want 3 allowed, one not_allowed, one ip_literal", rec.Connections, verdicts)
	}
}

// A host's --sandbox floor contains every call it executes, not only those
// of the runs it started: a run started on a host without one, its step
// submitted to a host with one, is contained there.
func TestSandboxFloorHoldsForAnotherHostsRun(t *testing.T) {
	s := steptest.Start(t, "")
	open := sandboxHost(t, s, config.SandboxProfile{}, config.SandboxProfile{})
	floored := sandboxHost(t, s, config.SandboxProfile{}, config.SandboxProfile{Mode: config.SandboxWorkspaceWrite})
	loc, outside := t.TempDir(), t.TempDir()
	run := startIn(t, open, loc, "")
	caughtUp(t, open, floored)
	out := submit(t, floored, run, 1, escape(outside))
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Fatalf("the floored host ran the other host's run unsandboxed: %q", out.Results[0].Content)
	}
	if _, err := os.Stat(filepath.Join(loc, "inside.txt")); err != nil {
		t.Errorf("the write inside the location: %v (result %q)", err, out.Results[0].Content)
	}
	// The result records the profile the call ran under there, which the
	// run's pinned one (none) does not say.
	shown, err := floored.Show(ctxT(t), commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	rec := shown.Steps[0].Calls[0].Result.Sandbox
	if shown.Snapshot.Sandbox != nil || rec == nil || rec.Profile == nil || rec.Profile.String() != "workspace-write, network off" {
		t.Errorf("the run pinned %+v, its call recorded %+v; want none pinned, and the floor's workspace-write, network off recorded", shown.Snapshot.Sandbox, rec)
	}
}
