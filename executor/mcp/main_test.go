package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/mcp"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/executor/sandbox"
	"go.uber.org/goleak"
)

var testServer mcptest.Binary

func TestMain(m *testing.M) {
	sandbox.MaybeRun() // the sandboxed server's helper is this binary
	dir, err := os.MkdirTemp("", "mcptest-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if testServer, err = mcptest.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// running is a client under Run, with the tool sets it handed over.
type running struct {
	c    *mcp.Client
	mu   sync.Mutex
	sets []mcp.ToolSet
	kick chan struct{}
}

// start runs a client for srv until the test ends.
func start(t *testing.T, srv mcp.Server) *running {
	t.Helper()
	return startResolve(t, srv.Name, func(context.Context) (mcp.Server, error) { return srv, nil })
}

// startResolve runs a client whose Resolve is resolve until the test ends.
func startResolve(t *testing.T, name string, resolve func(context.Context) (mcp.Server, error)) *running {
	t.Helper()
	r := &running{kick: make(chan struct{}, 1)}
	c, err := mcp.NewClient(name, mcp.Options{
		Resolve:        resolve,
		MinBackoff:     20 * time.Millisecond,
		MaxBackoff:     200 * time.Millisecond,
		ConnectTimeout: 10 * time.Second,
		OnChange: func(_ context.Context, set mcp.ToolSet) {
			r.mu.Lock()
			r.sets = append(r.sets, set)
			r.mu.Unlock()
			select {
			case r.kick <- struct{}{}:
			default:
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.c = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return r
}

// await returns the first tool set handed over (from the n-th on) that ok accepts.
func (r *running) await(t *testing.T, from int, ok func(mcp.ToolSet) bool) (mcp.ToolSet, int) {
	t.Helper()
	return r.awaitWithin(t, 15*time.Second, from, ok)
}

// awaitWithin is await with its own time limit.
func (r *running) awaitWithin(t *testing.T, limit time.Duration, from int, ok func(mcp.ToolSet) bool) (mcp.ToolSet, int) {
	t.Helper()
	deadline := time.After(limit)
	for {
		r.mu.Lock()
		for i := from; i < len(r.sets); i++ {
			if ok(r.sets[i]) {
				s := r.sets[i]
				r.mu.Unlock()
				return s, i + 1
			}
		}
		from = len(r.sets)
		r.mu.Unlock()
		select {
		case <-r.kick:
		case <-deadline:
			st := r.c.State()
			t.Fatalf("no such tool set; state %s (%s), %d tools", st.Phase, st.LastError, len(st.Tools))
		}
	}
}

func ready(s mcp.ToolSet) bool { return s.Phase == mcp.Ready }

// call prepares and runs tool name of set with args.
func call(t *testing.T, ctx context.Context, set mcp.ToolSet, name, args string) executor.Result {
	t.Helper()
	for _, tool := range set.Tools {
		if tool.Name() == name {
			p, err := tool.Prepare(executor.Call{Run: "r", CallID: "c"}, json.RawMessage(args))
			if err != nil {
				t.Fatalf("%s(%s): %v", name, args, err)
			}
			return p.Run(ctx)
		}
	}
	t.Fatalf("no tool %s in %v", name, names(set))
	return executor.Result{}
}

func names(set mcp.ToolSet) []string {
	var out []string
	for _, tool := range set.Tools {
		out = append(out, tool.Name())
	}
	return out
}

func stdio(t *testing.T, name string, trust bool, f mcptest.Flags) mcp.Server {
	return mcp.Server{Name: name, Command: testServer.Command(f), Trust: trust}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(b)); s != "" {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		return lines
	}
	return nil
}

func tempFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if content != "" {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
