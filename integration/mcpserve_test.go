package integration

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/mcpgw"
	"github.com/stepgate/stepgate/descriptor"
)

// The go-sdk's client drives `engine mcp serve` over stdio: the tools are
// the run's catalogue; an allowed call's result; a denied read is isError
// with the rule; a bash call asks, waits with progress notifications and
// gets its result once `engine approve` (another process) answers; a tool
// never listed is a protocol error; every call is a step of one run.
func TestMCPServeStdio(t *testing.T) {
	s := newGWSetup(t)
	var mu sync.Mutex
	var progress []string
	cs, _ := s.goClient(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}}, "--wait", "1m", "--progress-every", "200ms")

	names := gwToolNames(t, cs)
	for _, want := range []string{"bash", "glob", "read"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	if res := gwCall(t, cs, "read", map[string]any{"path": "notes.txt"}); res.IsError || !strings.Contains(gwText(res), "hello from notes") {
		t.Errorf("allowed read: isError=%v %q", res.IsError, gwText(res))
	}
	if res := gwCall(t, cs, "read", map[string]any{"path": "secret.txt"}); !res.IsError || !strings.Contains(gwText(res), `read "secret*"`) || strings.Contains(gwText(res), "the secret") {
		t.Errorf("denied read: isError=%v %q, want isError naming the rule", res.IsError, gwText(res))
	}

	approved := make(chan string, 1)
	go func() {
		tk := s.awaitTicket(t, "bash")
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			n := len(progress)
			mu.Unlock()
			if n > 0 {
				break // approved while the call waits, after it reported progress
			}
		}
		engine(t, "approve", tk.ID, "--nats", s.url, "--as", "operator")
		approved <- tk.ID
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo gated-hello"}}
	params.SetProgressToken("bash-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	tk := <-approved
	if res.IsError || !strings.Contains(gwText(res), "gated-hello") {
		t.Errorf("approved bash: isError=%v %q", res.IsError, gwText(res))
	}
	mu.Lock()
	if len(progress) == 0 || !strings.Contains(progress[0], "ticket "+tk) {
		t.Errorf("progress notifications while waiting: %q, want some naming ticket %s", progress, tk)
	}
	mu.Unlock()

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v, want a JSON-RPC invalid-params error", err)
	}

	r := s.show(t, s.runOf())
	if len(r.Steps) != 3 || r.Status != "running" {
		t.Fatalf("run %s: %d steps, status %s; want 3 steps (read, read, bash), running", r.ID, len(r.Steps), r.Status)
	}
	if got := r.Steps[2].Calls[0]; got.Tool != "bash" || got.Ticket != tk || got.Result == nil {
		t.Errorf("step 3: %+v, want the approved bash call", got)
	}
}

// Concurrent calls queue: a glob called while a bash call waits for its
// ticket runs after it, as the run's next step, once the ticket is
// answered.
func TestMCPServeConcurrentCallsQueue(t *testing.T) {
	s := newGWSetup(t)
	cs, _ := s.goClient(t, nil, "--wait", "1m")
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, 2)
	wg.Go(func() { results[0] = gwCall(t, cs, "bash", map[string]any{"command": "echo first"}) })
	tk := s.awaitTicket(t, "bash")
	wg.Go(func() { results[1] = gwCall(t, cs, "glob", map[string]any{"pattern": "*.txt"}) })
	time.Sleep(300 * time.Millisecond) // the glob waits its turn
	engine(t, "approve", tk.ID, "--nats", s.url)
	wg.Wait()
	if !strings.Contains(gwText(results[0]), "first") || !strings.Contains(gwText(results[1]), "notes.txt") {
		t.Errorf("results: bash %q, glob %q", gwText(results[0]), gwText(results[1]))
	}
	r := s.show(t, s.runOf())
	if len(r.Steps) != 2 || r.Steps[0].Calls[0].Tool != "bash" || r.Steps[1].Calls[0].Tool != "glob" {
		t.Errorf("steps: %+v, want bash then glob", r.Steps)
	}
}

// A restart of `engine mcp serve` loses no ticket: a call whose wait ended
// is told its ticket; the process is killed; a new process for the same
// session finds the run, refuses another call naming the ticket, attaches
// the same call again to that ticket (no second ticket), and after
// `engine approve` the call runs exactly once.
func TestMCPServeRestartKeepsTheTicket(t *testing.T) {
	s := newGWSetup(t)
	cs, cmd := s.goClient(t, nil, "--wait", "500ms")
	args := map[string]any{"command": "echo ran >> ran.log"}
	res := gwCall(t, cs, "bash", args)
	tk := s.awaitTicket(t, "bash")
	if !res.IsError || !strings.Contains(gwText(res), "engine approve "+tk.ID) || res.Meta["stepgate/ticket"] != tk.ID {
		t.Fatalf("unanswered bash: isError=%v meta=%v %q, want the ticket %s named", res.IsError, res.Meta, gwText(res), tk.ID)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}

	cs2, _ := s.goClient(t, nil, "--wait", "1m")
	other := gwCall(t, cs2, "glob", map[string]any{"pattern": "*"})
	if !other.IsError || !strings.Contains(gwText(other), tk.ID) {
		t.Errorf("another call while the ticket waits: isError=%v %q, want it refused naming %s", other.IsError, gwText(other), tk.ID)
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- gwCall(t, cs2, "bash", map[string]any{"command": "echo ran >> ran.log"}) }()
	time.Sleep(500 * time.Millisecond)
	if ts := s.tickets(t, "bash"); len(ts) != 1 || ts[0].ID != tk.ID {
		t.Fatalf("pending tickets after the call again: %+v, want only %s", ts, tk.ID)
	}
	engine(t, "approve", tk.ID, "--nats", s.url)
	if res := <-done; res.IsError {
		t.Errorf("approved bash after the restart: %q", gwText(res))
	}
	b, err := os.ReadFile(filepath.Join(s.loc, "ran.log"))
	if err != nil || string(b) != "ran\n" {
		t.Errorf("ran.log = %q, %v: want the command run exactly once", b, err)
	}
	r := s.show(t, s.runOf())
	if len(r.Steps) != 1 || len(r.Tickets) != 1 || r.Steps[0].Calls[0].Attempts != 1 {
		t.Errorf("run: %d steps, %d tickets, attempts %d: want one step, one ticket, one attempt", len(r.Steps), len(r.Tickets), r.Steps[0].Calls[0].Attempts)
	}
}

// With --elicit and a client that declares elicitation, the ticket is
// offered to the client's user; their approval replies through the reply
// command, recorded with a principal naming the MCP client. Without
// --elicit the client is never asked.
func TestMCPServeElicitation(t *testing.T) {
	s := newGWSetup(t)
	var asked []string
	var mu sync.Mutex
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, r.Params.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
	}}
	plain, _ := s.goClient(t, opts, "--wait", "500ms", "--session", "plain")
	if res := gwCall(t, plain, "bash", map[string]any{"command": "echo not yet"}); !res.IsError || !strings.Contains(gwText(res), "waits for a human") {
		t.Errorf("without --elicit: %q, want the ticket named", gwText(res))
	}
	mu.Lock()
	if len(asked) != 0 {
		t.Errorf("without --elicit the client was asked: %q", asked)
	}
	mu.Unlock()

	cs, _ := s.goClient(t, opts, "--wait", "1m", "--elicit", "--session", "elicit")
	res := gwCall(t, cs, "bash", map[string]any{"command": "echo elicited"})
	if res.IsError || !strings.Contains(gwText(res), "elicited") {
		t.Fatalf("bash approved through elicitation: isError=%v %q", res.IsError, gwText(res))
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "bash") || !strings.Contains(asked[0], "echo elicited") {
		t.Errorf("elicitation messages: %q", asked)
	}
	mu.Unlock()
	r := s.show(t, gwRun(s, "elicit"))
	if len(r.Tickets) != 1 || r.Tickets[0].Resolution == nil || r.Tickets[0].Resolution.Principal != "mcp-client:stepgate-go-test" {
		t.Errorf("tickets: %+v, want one resolved by mcp-client:stepgate-go-test", r.Tickets)
	}

	// A rejection with feedback: the model gets it, and the run goes on.
	rejecting := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "reject", "feedback": "not that one"}}, nil
	}}
	rs, _ := s.goClient(t, rejecting, "--wait", "1m", "--elicit", "--session", "reject")
	if res := gwCall(t, rs, "bash", map[string]any{"command": "echo never"}); !res.IsError || !strings.Contains(gwText(res), "not that one") {
		t.Errorf("bash rejected through elicitation: isError=%v %q, want the feedback", res.IsError, gwText(res))
	}
	if res := gwCall(t, rs, "glob", map[string]any{"pattern": "*.txt"}); res.IsError {
		t.Errorf("a call after the rejection: %q, want the run going on", gwText(res))
	}
}

// A catalogue that changes under a session (a tool registered in the
// location layer) reaches the client as notifications/tools/list_changed
// after its next call, and the next tools/list has the tool.
func TestMCPServeToolListChanged(t *testing.T) {
	s := newGWSetup(t)
	changed := make(chan struct{}, 8)
	cs, _ := s.goClient(t, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	if names := gwToolNames(t, cs); slices.Contains(names, "late_tool") {
		t.Fatalf("late_tool listed before it was registered: %v", names)
	}
	nc, err := nats.Connect(s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := sgclient.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.RegisterTools(ctx, sgclient.RegisterRequest{Tools: []descriptor.Descriptor{{Name: "late_tool", Description: "registered after the session started",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}}}); err != nil {
		t.Fatal(err)
	}
	gwCall(t, cs, "glob", map[string]any{"pattern": "*.txt"})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed after the catalogue changed")
	}
	if names := gwToolNames(t, cs); !slices.Contains(names, "late_tool") {
		t.Errorf("tools/list after list_changed: %v, want late_tool", names)
	}
}

// A reject without a message declines the run: the waiting call gets the
// rejection, later calls of the session are refused saying the run ended,
// and the MCP server's next start goes on with the session's next run.
func TestMCPServeDeclinedRunMovesOn(t *testing.T) {
	s := newGWSetup(t)
	cs, _ := s.goClient(t, nil, "--wait", "1m")
	go func() {
		tk := s.awaitTicket(t, "bash")
		engine(t, "reject", tk.ID, "--nats", s.url)
	}()
	if res := gwCall(t, cs, "bash", map[string]any{"command": "echo declined"}); !res.IsError || strings.Contains(gwText(res), "declined\n") {
		t.Errorf("bash rejected without a message: isError=%v %q", res.IsError, gwText(res))
	}
	if res := gwCall(t, cs, "glob", map[string]any{"pattern": "*"}); !res.IsError || !strings.Contains(gwText(res), "run has ended") {
		t.Errorf("a call after the decline: %q, want it refused saying the run ended", gwText(res))
	}
	if r := s.show(t, s.runOf()); r.Status != "ended" {
		t.Errorf("the declined run is %s", r.Status)
	}
	next, _ := s.goClient(t, nil)
	if res := gwCall(t, next, "glob", map[string]any{"pattern": "*.txt"}); res.IsError || !strings.Contains(gwText(res), "notes.txt") {
		t.Errorf("the next process's glob: %q", gwText(res))
	}
	if r := s.show(t, mcpgw.RunID("default", s.loc, "build", "", 1)); len(r.Steps) != 1 || r.Status != "running" {
		t.Errorf("the session's next run: %d steps, %s; want the glob, running", len(r.Steps), r.Status)
	}
}
