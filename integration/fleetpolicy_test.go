package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// The fleet's first configuration: bash asks, but for git status.
const fleetV1 = `agents:
  build:
    permission:
      bash: { "*": ask, "git status *": allow }
`

// The stricter second: reading asks too.
const fleetV2 = fleetV1 + `      read: ask
`

// fleetRuns is how many runs the first configuration is tried with.
const fleetRuns = 40

// One policy for the fleet: two `engine serve` hosts on one NATS server,
// only one of which has a user file of its own (not the fleet's). Once a
// file is pushed with `engine config push`, every one of 40 runs of
// `git status; touch pwned` through the queue group asks, whichever host
// starts it, and nothing runs; each run pins the version it started under.
// A stricter file pushed then reaches both hosts without a restart: the
// next runs' read asks on each of them.
func TestFleetPolicyProcesses(t *testing.T) {
	nats1 := startProcServer(t)
	url := nats1.url(0)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// h1 has no user file and starts before the fleet has a document.
	h1 := startFleetHost(t, url, "h1", "")
	h1.waitLog(t, "the fleet has no configuration document")

	push := engine(t, "config", "push", writeTemp(t, "fleet-v1.yaml", fleetV1), "--nats", url)
	if !strings.Contains(push, "version 1") {
		t.Fatalf("config push said %q, want version 1", push)
	}
	h1.waitLog(t, `fleet configuration applied" version=1`)

	// h2 has a user file of its own that allows every command, and starts
	// after the push: it says its file is not the fleet's, and uses the fleet's.
	h2 := startFleetHost(t, url, "h2", "agents:\n  build:\n    permission:\n      bash: allow\n")
	h2.waitLog(t, `fleet configuration applied" version=1`)
	h2.waitLog(t, "this host's user file is not the fleet's configuration")
	if warn := h2.logs(); !strings.Contains(warn, "fleet_sha256="+digestOf(fleetV1)) || !strings.Contains(warn, "file_sha256=") {
		t.Errorf("h2's warning names not both digests:\n%s", warn)
	}

	show := engine(t, "config", "show", "--nats", url)
	if !strings.Contains(show, "version 1\n") || !strings.Contains(show, "sha256 "+digestOf(fleetV1)) || !strings.HasSuffix(show, fleetV1) {
		t.Errorf("config show:\n%s", show)
	}

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	f := &fleetDriver{t: t, nc: nc, ws: ws}

	hosts := map[string]int{}
	var mu sync.Mutex
	var ran []string
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for r := range work {
				run, host, version := f.start()
				out := f.submit(run, "bash", map[string]string{"command": "git status; touch pwned"})
				mu.Lock()
				hosts[host]++
				if out.Final || len(out.Tickets) != 1 || version != 1 {
					what := "asked"
					if len(out.Results) == 1 {
						what = fmt.Sprintf("%s by rule %s", out.Results[0].Verdict, out.Results[0].Rule)
					}
					ran = append(ran, fmt.Sprintf("run %d on %s under config version %d: final %v, %d tickets, %s", r, host, version, out.Final, len(out.Tickets), what))
				}
				mu.Unlock()
			}
		})
	}
	for r := range fleetRuns {
		work <- r
	}
	close(work)
	wg.Wait()
	if len(ran) > 0 {
		t.Errorf("%d of %d runs did not ask under the fleet's configuration version 1:\n%s", len(ran), fleetRuns, strings.Join(ran, "\n"))
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("pwned exists (%v): a command ran without asking", err)
	}
	if hosts["h1"] == 0 || hosts["h2"] == 0 {
		t.Fatalf("runs started per host %v: want both hosts to start some", hosts)
	}
	run, _, _ := f.start()
	if out := f.submit(run, "read", map[string]string{"path": "notes.txt"}); !out.Final || len(out.Tickets) != 0 {
		t.Fatalf("read under version 1: %+v, want it allowed", out)
	}

	engine(t, "config", "push", writeTemp(t, "fleet-v2.yaml", fleetV2), "--nats", url)
	h1.waitLog(t, `fleet configuration applied" version=2`)
	h2.waitLog(t, `fleet configuration applied" version=2`)
	asked := map[string]bool{}
	for i := 0; len(asked) < 2; i++ {
		if i == 60 {
			t.Fatalf("60 runs under version 2 started on %v only", asked)
		}
		run, host, version := f.start()
		out := f.submit(run, "read", map[string]string{"path": "notes.txt"})
		if out.Final || len(out.Tickets) != 1 || version != 2 {
			t.Fatalf("read in run %s on %s under config version %d: %+v, want it to ask under version 2", run, host, version, out)
		}
		asked[host] = true
	}
	got := engine(t, "show", "--nats", url, run)
	if !strings.Contains(got, "fleet config version 1") {
		t.Errorf("show of a run started under version 1 does not name it:\n%s", got)
	}
	if got := engine(t, "show", "--json", "--nats", url, run); !strings.Contains(got, `"config_version": 1`) {
		t.Errorf("show --json of a run started under version 1 does not name it:\n%s", got)
	}
	if got := engine(t, "audit", "--nats", url); strings.Count(got, `"config_version":2`) < 2 || strings.Count(got, `"config_version":1`) < fleetRuns {
		t.Errorf("the audit does not name each run's configuration version:\n%.2000s", got)
	}

	// The operators of the web app are the fleet's too: a host without a
	// user file of its own serves the inbox with the operators pushed.
	engine(t, "config", "push", writeTemp(t, "fleet-v3.yaml", fleetV2+"operators: {ops-1: {token_sha256: "+strings.Repeat("ab", 32)+"}}\n"), "--nats", url)
	h3 := startFleetHost(t, url, "h3", "", "--http", "127.0.0.1:0")
	h3.waitLog(t, `fleet configuration applied" version=3`)
}

// fleetHost is an `engine serve --nats` process with its own configuration
// directory, whose log the test reads while it runs.
type fleetHost struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps what the host logs.
func (h *fleetHost) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.Write(p)
}

// logs is what the host logged so far.
func (h *fleetHost) logs() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}

// waitLog waits (a deadline only against a hang) until the host logged want.
func (h *fleetHost) waitLog(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(h.logs(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the host never logged %q:\n%s", want, h.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startFleetHost starts `engine serve --nats url --host name` and extra
// with a fresh XDG_CONFIG_HOME holding userFile as its user file ("" for
// none).
func startFleetHost(t *testing.T, url, name, userFile string, extra ...string) *fleetHost {
	t.Helper()
	xdg := t.TempDir()
	if userFile != "" {
		if err := os.MkdirAll(filepath.Join(xdg, "stepgate"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(xdg, "stepgate", "config.yaml"), []byte(userFile), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := &fleetHost{cmd: exec.Command(engineBin, append([]string{"serve", "--nats", url, "--data", t.TempDir(), "--host", name}, extra...)...)}
	h.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+xdg, "STEPGATE_LOG_LEVEL=info") // info: "fleet configuration applied"
	h.cmd.Stderr = h
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		_ = h.cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "stepgate serving") {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
		t.Fatalf("engine serve %s did not start: %q %v\n%s", name, line, err, h.logs())
	}
	return h
}

// fleetDriver starts runs and submits steps through the queue group.
type fleetDriver struct {
	t  *testing.T
	nc *nats.Conn
	ws string
}

// start starts a run in the workspace and returns it, the host that
// committed its start and the configuration version it pinned.
func (f *fleetDriver) start() (run, host string, version uint64) {
	f.t.Helper()
	info, err := ask[commands.RunInfo](f.t, f.nc, "start_run", map[string]any{"location": f.ws})
	if err != nil {
		f.t.Fatalf("start_run: %v", err)
	}
	js, err := jetstream.New(f.nc)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		f.t.Fatal(err)
	}
	msg, err := s.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(events.RunSubject(info.Run)))
	if err != nil {
		f.t.Fatalf("the start commit of %s: %v", info.Run, err)
	}
	c, err := events.Unmarshal(msg.Data)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, e := range c.Events {
		if s, ok := e.(events.RunStarted); ok {
			return info.Run, c.Host, s.ConfigVersion
		}
	}
	f.t.Fatalf("the first commit of %s holds no RunStarted", info.Run)
	return "", "", 0
}

// submit submits step 1 of run: one call of tool with args.
func (f *fleetDriver) submit(run, tool string, args any) *commands.StepOutcome {
	f.t.Helper()
	b, _ := json.Marshal(args)
	out, err := ask[commands.StepOutcome](f.t, f.nc, "submit_step", commands.SubmitStepRequest{Run: run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: tool, Args: b}}})
	if err != nil {
		f.t.Fatalf("submit_step: %v", err)
	}
	return out
}

// writeTemp writes text to a file named name in a fresh directory.
func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// digestOf is the hex SHA-256 of text.
func digestOf(text string) string {
	return config.Digest([]byte(text))
}
