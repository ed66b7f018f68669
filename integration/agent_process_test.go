package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// agentProc is an `engine agent --json` process: its events as they come.
type agentProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	mu     sync.Mutex
	events []map[string]any
	more   chan struct{} // signalled at each event
	done   chan struct{} // closed once stdout ended
}

// startAgent starts engine agent with args and extra environment.
func startAgent(t *testing.T, env []string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{cmd: exec.Command(engineBin, append([]string{"agent", "--json", "--stream=false"}, args...)...),
		more: make(chan struct{}, 1), done: make(chan struct{})}
	// no key and no user's file unless env gives them
	p.cmd.Env = append(append(os.Environ(), "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "XDG_CONFIG_HOME="+t.TempDir()), env...)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				ev = map[string]any{"event": "unparsed", "line": sc.Text()}
			}
			p.mu.Lock()
			p.events = append(p.events, ev)
			p.mu.Unlock()
			select {
			case p.more <- struct{}{}:
			default:
			}
		}
	}()
	return p
}

// await returns the first event of the kind (from the start), waiting
// for it; nil when the process ended without one.
func (p *agentProc) await(t *testing.T, kind string) map[string]any {
	t.Helper()
	deadline := time.After(2 * time.Minute) // only to stop a hang
	for {
		p.mu.Lock()
		for _, ev := range p.events {
			if ev["event"] == kind {
				p.mu.Unlock()
				return ev
			}
		}
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-p.done:
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, ev := range p.events {
				if ev["event"] == kind {
					return ev
				}
			}
			return nil
		case <-deadline:
			t.Fatalf("no %s event from engine agent; stderr:\n%s", kind, p.stderr.String())
		}
	}
}

// exit waits for the process and returns its exit code.
func (p *agentProc) exit(t *testing.T) int {
	t.Helper()
	<-p.done
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// kill9 kills the process at once.
func (p *agentProc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	_ = p.cmd.Wait()
}

// agentWorkspace is a location whose project file makes bash ask when
// ask is set.
func agentWorkspace(t *testing.T, ask bool) string {
	t.Helper()
	ws := t.TempDir()
	if ask {
		if err := os.MkdirAll(filepath.Join(ws, ".stepgate"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, ".stepgate", "config.yaml"), []byte("agents:\n  build:\n    permission:\n      bash: ask\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// writeAndRun is the tests' model: it writes out.txt and appends a line
// to ran.log with bash, in one turn, then answers.
func writeAndRun(t *testing.T) *chatFake {
	return newChatFake(t,
		fakeTurn{text: "I will write the file and run the command.", calls: [][2]string{
			{"write", `{"path":"out.txt","content":"hello from the model\n"}`},
			{"bash", `{"command":"echo ran >> ran.log && echo appended"}`},
		}},
		fakeTurn{text: "Done: out.txt is written and the command ran."},
	)
}

// fileLines are the lines of a file ("" for none).
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// find returns the first event of the kind so far, or nil.
func (p *agentProc) find(kind string) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ev := range p.events {
		if ev["event"] == kind {
			return ev
		}
	}
	return nil
}

// wait waits for the next event, the end of output, or d.
func (p *agentProc) wait(d time.Duration) {
	select {
	case <-p.more:
	case <-p.done:
	case <-time.After(d):
	}
}

// ended waits up to d (or the next event) and reports whether the
// process's output has ended.
func (p *agentProc) ended(d time.Duration) bool {
	p.wait(d)
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
