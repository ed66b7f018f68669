package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// httpGW starts `engine mcp serve --listen` on a free loopback address
// with extra flags, waits until it serves, and returns the address.
func (s *gwSetup) httpGW(t *testing.T, extra ...string) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(engineBin, s.mcpArgs(append([]string{"--listen", addr}, extra...)...)...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("engine mcp serve --listen's stderr:\n%s", stderr.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), "streamable HTTP at"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("engine mcp serve --listen did not start:\n%s", stderr.String())
		}
	}
	return addr
}

// progressSeen records, per progress token, whether a notification came.
type progressSeen struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (p *progressSeen) handler(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen[fmt.Sprint(r.Params.ProgressToken)] = true
}

// await waits until every token has had a notification, for at most a
// minute; it reports the tokens that had none.
func (p *progressSeen) await(tokens ...string) (missing []string) {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		p.mu.Lock()
		missing = missing[:0]
		for _, tk := range tokens {
			if !p.seen[tk] {
				missing = append(missing, tk)
			}
		}
		p.mu.Unlock()
		if len(missing) == 0 || time.Now().After(deadline) {
			return missing
		}
	}
}

// Three identical tools/call over streamable HTTP, from three MCP
// sessions (the go-sdk's client), while the first waits for its ticket:
// the repeats join that ticket (each waits, sending progress, and no
// second ticket is issued), the one approval runs the command once, and
// all three get its result. Once the result is delivered, the same call
// again is a new call: a new step with a new ticket.
func TestMCPServeRepeatedCallJoinsTheTicket(t *testing.T) {
	s := newGWSetup(t)
	addr := s.httpGW(t, "--session", "repeat", "--wait", "3m", "--progress-every", "100ms")
	p := &progressSeen{seen: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sessions := make([]*mcp.ClientSession, 3)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprintf("stepgate-go-http-%d", i), Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: p.handler}).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	args := map[string]any{"command": "echo ran >> ran.log && echo ran-once"}
	results := make([]*mcp.CallToolResult, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	call := func(i int) {
		params := &mcp.CallToolParams{Name: "bash", Arguments: args}
		params.SetProgressToken(fmt.Sprintf("call-%d", i))
		results[i], errs[i] = sessions[i].CallTool(ctx, params)
	}
	wg.Go(func() { call(0) })
	tk := s.awaitTicket(t, "bash")
	if missing := p.await("call-0"); len(missing) > 0 {
		t.Fatalf("the first call sent no progress while its ticket %s waited", tk.ID)
	}
	wg.Go(func() { call(1) })
	wg.Go(func() { call(2) })
	if missing := p.await("call-1", "call-2"); len(missing) > 0 {
		t.Errorf("repeated calls %v sent no progress while ticket %s waited: they did not join it", missing, tk.ID)
	}
	if ts := s.tickets(t, "bash"); len(ts) != 1 || ts[0].ID != tk.ID {
		t.Errorf("pending bash tickets with three identical calls: %+v, want only %s", ts, tk.ID)
	}
	engine(t, "approve", tk.ID, "--nats", s.url)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
		default:
			if ts := s.tickets(t, "bash"); len(ts) > 0 {
				cancel() // the calls would wait on it
				<-done
				t.Fatalf("after approving %s, a repeated call opened ticket %s: its approval would run the command again", tk.ID, ts[0].ID)
			}
			if time.Now().Before(deadline) {
				continue
			}
			t.Fatal("the three calls did not end a minute after the approval")
		}
		break
	}
	for i, res := range results {
		if errs[i] != nil {
			t.Errorf("call %d: %v", i, errs[i])
		} else if res.IsError || !strings.Contains(gwText(res), "ran-once") {
			t.Errorf("call %d: isError=%v %q, want the approved command's output", i, res.IsError, gwText(res))
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.loc, "ran.log")); err != nil || string(b) != "ran\n" {
		t.Errorf("ran.log = %q, %v: want the command run exactly once", b, err)
	}
	if r := s.show(t, gwRun(s, "repeat")); len(r.Steps) != 1 || len(r.Tickets) != 1 {
		t.Errorf("run: %d steps, %d tickets; want one step and one ticket", len(r.Steps), len(r.Tickets))
	}

	// After the result was delivered, the same call is a new call.
	wg.Go(func() { call(0) })
	again := s.awaitTicket(t, "bash")
	if again.ID == tk.ID {
		t.Errorf("the call after the result waits on the old ticket %s", tk.ID)
	}
	engine(t, "approve", again.ID, "--nats", s.url)
	wg.Wait()
	if errs[0] != nil || results[0].IsError {
		t.Errorf("the call again after its result: %v %+v", errs[0], results[0])
	}
	if b, err := os.ReadFile(filepath.Join(s.loc, "ran.log")); err != nil || string(b) != "ran\nran\n" {
		t.Errorf("ran.log = %q, %v: want the new call run once more", b, err)
	}
}

// The official TypeScript SDK sends one bash call twice at once over
// stdio (the same arguments, keys in another order): both wait on one
// ticket, reporting progress, and after its one approval both get the
// result of one run of the command.
func TestMCPServeTypeScriptRepeatedCall(t *testing.T) {
	node, dir := gwJS(t)
	s := newGWSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs"), "--repeat", engineBin}, s.mcpArgs("--session", "ts-repeat", "--wait", "3m", "--progress-every", "100ms")...)...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var repeated struct {
		Results []gwJSEvent `json:"results"`
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev gwJSEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("client.mjs printed %q: %v", sc.Text(), err)
		}
		switch ev.Event {
		case "progressed": // both calls wait: one ticket, answered from another process
			if ts := s.tickets(t, "bash"); len(ts) != 1 {
				t.Errorf("pending bash tickets with the call sent twice: %+v, want one", ts)
			}
			engine(t, "approve", s.awaitTicket(t, "bash").ID, "--nats", s.url)
		case "repeated":
			if err := json.Unmarshal(sc.Bytes(), &repeated); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client.mjs --repeat: %v\n%s", err, stderr.String())
	}
	if len(repeated.Results) != 2 {
		t.Fatalf("client.mjs --repeat: %d results, want 2\n%s", len(repeated.Results), stderr.String())
	}
	for i, r := range repeated.Results {
		if r.IsError || !strings.Contains(r.Text, "ran-once") {
			t.Errorf("call %d: %+v, want the approved command's output", i, r)
		}
	}
	if b, err := os.ReadFile(filepath.Join(s.loc, "ran.log")); err != nil || string(b) != "ran\n" {
		t.Errorf("ran.log = %q, %v: want the command run exactly once", b, err)
	}
	if r := s.show(t, gwRun(s, "ts-repeat")); len(r.Steps) != 1 || len(r.Tickets) != 1 {
		t.Errorf("run: %d steps, %d tickets; want one step and one ticket", len(r.Steps), len(r.Tickets))
	}
}
