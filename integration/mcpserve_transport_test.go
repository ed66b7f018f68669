package integration

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// With --data the engine runs in the MCP server's process: stdout still
// carries nothing but the protocol, and calls are steps of the run there.
func TestMCPServeData(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	s := &gwSetup{loc: t.TempDir()}
	data := t.TempDir()
	cmd := exec.Command(engineBin, "mcp", "serve", "--data", data, "--location", s.loc)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stepgate-go-data", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(s.loc, "a.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := gwCall(t, cs, "glob", map[string]any{"pattern": "*.txt"}); res.IsError || !strings.Contains(gwText(res), "a.txt") {
		t.Errorf("glob with --data: %q", gwText(res))
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v\n%s", err, stderr.String())
	}
	out := engine(t, "show", "--data", data, s.runOf())
	if !strings.Contains(out, "glob") {
		t.Errorf("engine show --data after the session:\n%s", out)
	}
}

// Over streamable HTTP the tools are the same as over stdio and a call is
// a step; a non-loopback --listen is refused unless --listen-remote.
func TestMCPServeHTTP(t *testing.T) {
	s := newGWSetup(t)
	stdio, _ := s.goClient(t, nil)
	want := gwToolNames(t, stdio)

	addr := freeAddr(t)
	cmd := exec.Command(engineBin, s.mcpArgs("--listen", addr, "--session", "http")...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for !strings.Contains(stderr.String(), "streamable HTTP at") {
		if ctx.Err() != nil {
			t.Fatalf("engine mcp serve --listen did not start:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stepgate-go-http", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := gwToolNames(t, cs); !slices.Equal(got, want) {
		t.Errorf("HTTP tools %v, stdio tools %v", got, want)
	}
	if res := gwCall(t, cs, "glob", map[string]any{"pattern": "*.txt"}); res.IsError || !strings.Contains(gwText(res), "notes.txt") {
		t.Errorf("glob over HTTP: %q", gwText(res))
	}
	if r := s.show(t, gwRun(s, "http")); len(r.Steps) != 1 {
		t.Errorf("HTTP session's run has %d steps, want 1", len(r.Steps))
	}

	// A web page's request (cross-site) and a rebound DNS name are refused.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	for why, hdr := range map[string][2]string{"cross-site": {"Sec-Fetch-Site", "cross-site"}, "rebinding": {"Host", "attacker.example:80"}} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/", strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if hdr[0] == "Host" {
			req.Host = hdr[1]
		} else {
			req.Header.Set(hdr[0], hdr[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s request: status %d, want 403", why, resp.StatusCode)
		}
	}

	refused := exec.Command(engineBin, s.mcpArgs("--listen", "0.0.0.0:0")...)
	out, err := refused.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "not a loopback address") {
		t.Errorf("--listen 0.0.0.0:0: %v %s, want exit 2 naming the loopback rule", err, out)
	}
}
