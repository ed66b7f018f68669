// Package mcptest builds and starts the test MCP server (./server) for
// tests: over stdio, as a Server's Command, or over loopback HTTP.
//
// A test binary builds it once, in its TestMain:
//
//	func TestMain(m *testing.M) {
//		dir, _ := os.MkdirTemp("", "mcptest-*")
//		bin, err := mcptest.Build(dir)
//		...
//		code := m.Run()
//		os.RemoveAll(dir)
//		os.Exit(code)
//	}
package mcptest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary is the built test server.
type Binary struct {
	Path string
}

// Build compiles the test server into dir.
func Build(dir string) (Binary, error) {
	bin := filepath.Join(dir, "mcptest-server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/stepgate/stepgate/executor/mcp/mcptest/server")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Binary{}, fmt.Errorf("build the test MCP server: %w\n%s", err, out)
	}
	return Binary{Path: bin}, nil
}

// Flags are the test server's options.
type Flags struct {
	Calls     string // file to append one line per executed call to
	Auth      string // Authorization header value the HTTP server requires
	ToolsFile string // file naming the tool set (v1, v2, invalid), watched
	Leak      string // environment variable whose secret the server leaks (see the server's leak.go)
	Writer    bool   // the server has the tool write_file (path, text), which writes a file
}

func (f Flags) args() []string {
	var out []string
	if f.Calls != "" {
		out = append(out, "--calls", f.Calls)
	}
	if f.Auth != "" {
		out = append(out, "--auth", f.Auth)
	}
	if f.ToolsFile != "" {
		out = append(out, "--tools-file", f.ToolsFile)
	}
	if f.Leak != "" {
		out = append(out, "--leak", f.Leak)
	}
	if f.Writer {
		out = append(out, "--writer")
	}
	return out
}

// Command is the argv that runs the server over stdio.
func (b Binary) Command(f Flags) []string {
	return append([]string{b.Path}, f.args()...)
}

// HTTP is a test server serving streamable HTTP on loopback.
type HTTP struct {
	URL string
	Cmd *exec.Cmd
}

// Kill stops the server with SIGKILL and waits for it.
func (h *HTTP) Kill() {
	_ = h.Cmd.Process.Signal(syscall.SIGKILL)
	_ = h.Cmd.Wait()
}

// StartHTTP starts the server on 127.0.0.1 (addr "" picks a free port) and
// returns once it listens; it is killed when the test ends.
func (b Binary) StartHTTP(t testing.TB, addr string, f Flags) *HTTP {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cmd := exec.Command(b.Path, append([]string{"--http", addr}, f.args()...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &HTTP{Cmd: cmd}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			h.Kill()
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
		if !ok {
			t.Fatalf("test MCP server: %q", line)
		}
		h.URL = u
	case <-time.After(10 * time.Second):
		t.Fatal("test MCP server did not start listening")
	}
	return h
}
