package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
)

// killTrial is one `engine serve` on a data directory under the default
// host name (no --host), with `engine run` clients driving scripts of
// append_fx steps over TCP while the server is killed with SIGKILL and
// started again.
type killTrial struct {
	t                *testing.T
	data, addr, ws   string
	clients, steps   int
	timeout          string // the clients' --timeout
	nats             string // the clients' --nats when not the server's address (a cluster's URLs)
	srv              *server
	mu               sync.Mutex
	results          []clientResult
	serveLog         bytes.Buffer // stderr of every killed server
	kills, restarted int
	running          []int // at each kill, how many clients were running
}

// clientResult is what one `engine run` printed and how it ended.
type clientResult struct {
	n        int
	out, err string
	exit     error
	took     time.Duration
}

func newKillTrial(t *testing.T, clients, steps int, timeout string) *killTrial {
	k := &killTrial{t: t, data: t.TempDir(), addr: freeAddr(t), ws: t.TempDir(), clients: clients, steps: steps, timeout: timeout}
	k.srv = k.serve()
	return k
}

// serve starts `engine serve` on the trial's data and address, without
// --host: the data directory's identity.
func (k *killTrial) serve() *server {
	return serveArgs(k.t, "--data", k.data, "--listen", k.addr, "--test-tools")
}

// url is what the clients are given as --nats.
func (k *killTrial) url() string {
	if k.nats != "" {
		return k.nats
	}
	return "nats://" + k.addr
}

// text is the side effect of client c's step n: a line appended to the
// client's effects file.
func text(c, n int) string { return fmt.Sprintf("k%d-%d", c, n) }

func effects(c int) string { return fmt.Sprintf("effects-%d", c) }

// script writes client c's script.
func (k *killTrial) script(c int) string {
	var b strings.Builder
	for n := 1; n <= k.steps; n++ {
		fmt.Fprintf(&b, `{"calls":[{"id":"c%d","tool":"append_fx","args":{"text":%q,"path":%q}}]}`+"\n", n, text(c, n), effects(c))
	}
	path := filepath.Join(k.t.TempDir(), fmt.Sprintf("script-%d.jsonl", c))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		k.t.Fatal(err)
	}
	return path
}

// drive starts the clients; wait waits for them all. A client still
// running after deadline is killed (and fails the check).
func (k *killTrial) drive(deadline time.Duration) (wait func()) {
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	for c := range k.clients {
		script := k.script(c)
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, engineBin, "run", "--nats", k.url(), "--script", script, "--location", k.ws, "--json", "--timeout", k.timeout)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			began := time.Now()
			err := cmd.Run()
			k.mu.Lock()
			k.results = append(k.results, clientResult{n: c, out: stdout.String(), err: stderr.String(), exit: err, took: time.Since(began)})
			k.mu.Unlock()
		})
	}
	return func() { wg.Wait(); cancel() }
}

// crash kills the server with SIGKILL and starts it again on the same data
// after pause.
func (k *killTrial) crash(pause time.Duration) {
	k.mu.Lock()
	k.running = append(k.running, k.clients-len(k.results))
	k.mu.Unlock()
	k.srv.kill9(k.t)
	k.serveLog.Write(k.srv.stderr.Bytes())
	k.kills++
	time.Sleep(pause)
	k.srv = k.serve()
	k.restarted++
}

// check asserts the kill -9 property over what the clients printed, what
// `engine show` and `engine runs` say and the effects files hold: every
// client completed its script (exit 0, every step and the end printed); no
// acknowledged step is missing from the log or differs there; no step is
// open; no call's effect happened twice; every call whose result says it
// ran has its effect; one run per client.
func (k *killTrial) check() {
	t := k.t
	t.Helper()
	url := k.url()
	indeterminate := 0
	for _, r := range k.results {
		t.Logf("client %d took %s", r.n, r.took.Round(time.Millisecond))
		if r.exit != nil {
			t.Errorf("client %d: %v\nstderr:\n%s\nstdout tail:\n%s\nserver:\n%s", r.n, r.exit, r.err, tail(r.out, 5), k.serveLog.String())
			continue
		}
		lines := strings.Split(strings.TrimSpace(r.out), "\n")
		if len(lines) != k.steps+2 {
			t.Errorf("client %d printed %d lines, want the start, %d steps and the end:\n%s", r.n, len(lines), k.steps, tail(r.out, 5))
			continue
		}
		var started struct{ Run string }
		if err := json.Unmarshal([]byte(lines[0]), &started); err != nil || started.Run == "" {
			t.Errorf("client %d: first line %q: %v", r.n, lines[0], err)
			continue
		}
		var run projection.Run
		if err := json.Unmarshal([]byte(engine(t, "show", "--nats", url, "--json", started.Run)), &run); err != nil {
			t.Fatal(err)
		}
		if run.Status != projection.StatusEnded || len(run.Steps) != k.steps {
			t.Errorf("client %d's run %s: status %s with %d steps, want ended with %d", r.n, run.ID, run.Status, len(run.Steps), k.steps)
		}
		lines2 := effectCounts(t, filepath.Join(k.ws, effects(r.n)))
		for n := 1; n <= k.steps; n++ {
			var seen commands.StepOutcome
			if err := json.Unmarshal([]byte(lines[n]), &seen); err != nil || seen.Step != n || !seen.Final || len(seen.Results) != 1 {
				t.Errorf("client %d step %d: printed %q (%v)", r.n, n, lines[n], err)
				continue
			}
			want, got := text(r.n, n), seen.Results[0].Content
			if s := run.Step(n); s == nil || !s.Final || len(s.Calls) != 1 || s.Calls[0].Result == nil {
				t.Errorf("client %d step %d was acknowledged but is not committed whole: %+v", r.n, n, s)
			} else if logged := s.Calls[0].Result.Parts[0].Text; logged != got {
				t.Errorf("client %d step %d: the client saw %q, the log holds %q", r.n, n, got, logged)
			}
			switch c := lines2[want]; {
			case c > 1:
				t.Errorf("client %d step %d: the side effect happened %d times", r.n, n, c)
			case got == want && c != 1:
				t.Errorf("client %d step %d: the result says it ran, the effects file has it %d times", r.n, n, c)
			case got == commands.IndeterminateResult:
				indeterminate++
			case got != want:
				t.Errorf("client %d step %d: result %q", r.n, n, got)
			}
		}
	}
	var runs []commands.RunSummary
	if err := json.Unmarshal([]byte(engine(t, "runs", "--nats", url, "--json")), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != k.clients {
		t.Errorf("%d runs for %d clients (a start sent again must not start a second run)", len(runs), k.clients)
	}
	for _, s := range runs {
		if s.Status != projection.StatusEnded {
			t.Errorf("run %s left %s", s.ID, s.Status)
		}
	}
	t.Logf("%d clients × %d steps, %d kills (clients running at each: %v): %d results indeterminate", k.clients, k.steps, k.kills, k.running, indeterminate)
}

// effectCounts counts each line of an effects file.
func effectCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		counts[sc.Text()]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// progressed waits until client c's effects file holds at least n lines
// (or every client has finished): a moment under load.
func (k *killTrial) progressed(c, n int) {
	path := filepath.Join(k.ws, effects(c))
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		k.mu.Lock()
		done := len(k.results) == k.clients
		k.mu.Unlock()
		if b, err := os.ReadFile(path); done || err == nil && bytes.Count(b, []byte("\n")) >= n {
			return
		}
	}
	k.t.Errorf("client %d made no progress to %d steps in 30s", c, n)
}

// jitter is a random duration in [lo, hi).
func jitter(lo, hi time.Duration) time.Duration {
	return lo + rand.N(hi-lo)
}
