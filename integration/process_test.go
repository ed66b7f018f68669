package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stepgate/stepgate/internal/enginebin"
	"github.com/stepgate/stepgate/internal/syncbuf"
	"github.com/stepgate/stepgate/projection"
)

// engineBin is the engine binary built once for the process tests.
var engineBin string

func TestMain(m *testing.M) { enginebin.Main(m, "stepgate-integration", &engineBin) }

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// server is an `engine serve` process.
type server struct {
	cmd    *exec.Cmd
	stderr syncbuf.Buffer // written by the process while a test reads it
}

// serve starts `engine serve --test-tools` (the tests' steps call echo) on
// data, listening on addr, and waits until it says it is serving.
func serve(t *testing.T, data, addr string) *server {
	t.Helper()
	return serveArgs(t, "--data", data, "--listen", addr, "--host", "proc", "--test-tools")
}

// engine runs the binary to completion and returns its stdout.
func engine(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(engineBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("engine %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// `engine serve` as a real process: `engine run` drives 50 steps over TCP,
// the server is killed with SIGKILL and started again on the same data, and
// `engine show` lists all 50 steps.
func TestServeSurvivesSIGKILL(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	addr := freeAddr(t)
	url := "nats://" + addr
	var script strings.Builder
	for n := 1; n <= 50; n++ {
		tool := "echo"
		if n%2 == 0 {
			tool = "echo_fx"
		}
		fmt.Fprintf(&script, `{"calls":[{"id":"c%d","tool":%q,"args":{"text":"step %d"}}]}`+"\n", n, tool, n)
	}
	scriptPath := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	srv := serve(t, data, addr)
	out := engine(t, "run", "--nats", url, "--script", scriptPath, "--location", ws, "--json", "--keep-open")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 52 || !strings.Contains(lines[51], `"event":"note"`) || !strings.Contains(lines[51], "engine end") {
		t.Fatalf("engine run printed %d lines, want the start, 50 steps and the note of how to end the run it kept open:\n%s", len(lines), out)
	}
	var started struct{ Run string }
	if err := json.Unmarshal([]byte(lines[0]), &started); err != nil || started.Run == "" {
		t.Fatalf("first line %q: %v", lines[0], err)
	}

	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()

	srv = serve(t, data, addr)
	var run projection.Run
	if err := json.Unmarshal([]byte(engine(t, "show", "--nats", url, "--json", started.Run)), &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Steps) != 50 {
		t.Fatalf("after SIGKILL and restart the run shows %d steps, want 50", len(run.Steps))
	}
	for _, s := range run.Steps {
		want := fmt.Sprintf("step %d", s.N)
		if !s.Final || len(s.Calls) != 1 || s.Calls[0].Result == nil || s.Calls[0].Result.Parts[0].Text != want {
			t.Fatalf("step %d after restart: %+v", s.N, s)
		}
	}
	// The restarted engine lists the run with its 50 steps.
	if out := engine(t, "runs", "--nats", url); !strings.Contains(out, started.Run) || !strings.Contains(out, "50 steps") {
		t.Errorf("engine runs after restart:\n%s", out)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("engine serve after SIGTERM: %v\n%s", err, srv.stderr.String())
	}
}
