package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// roleLogin is one shipped role's login for the engine's verbs: user,
// password file and inbox prefix, as deploy/access/accounts.conf has them.
func roleLogin(t *testing.T, dir, role, password string) []string {
	t.Helper()
	pw := filepath.Join(dir, role+".pw")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--user", role, "--password-file", pw}
	if role != "engine" {
		args = append(args, "--inbox-prefix", "_INBOX."+role)
	}
	return args
}

// The MCP gateway run as the shipped agent role, on an embedded server that
// enforces deploy/access/accounts.conf: an asking call reports progress
// while it waits and gets its result once `engine approve`, run as the
// approver role, answers the ticket — nothing in between needs a
// permission the agent role lacks (it used to ask stepgate.tickets, which
// the role denies, and stall).
func TestMCPServeAsTheAgentRole(t *testing.T) {
	s := newGWSetup(t) // a location with gwPolicy (the served engine reads it); its own server is not used
	r := serveShippedRoles(t)
	s.url = r.url
	approver := r.login["approver"]

	var mu sync.Mutex
	var progress []string
	agent := r.login["agent"][2:] // goClient gives --nats
	cs, cmd := s.goClient(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		progress = append(progress, r.Params.Message)
		mu.Unlock()
	}}, append(agent, "--wait", "1m", "--progress-every", "200ms")...)

	approved := make(chan string, 1)
	go func() {
		var tk sgclient.TicketView
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			var page sgclient.TicketPage
			if err := json.Unmarshal([]byte(engine(t, append([]string{"tickets", "--tool", "bash", "--json"}, approver...)...)), &page); err != nil {
				t.Error(err)
				approved <- ""
				return
			}
			mu.Lock()
			n := len(progress)
			mu.Unlock()
			if len(page.Tickets) == 1 && n > 0 {
				tk = page.Tickets[0]
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("no bash ticket with progress reported within 30s: %+v, progress %q", page.Tickets, progress)
				approved <- ""
				return
			}
		}
		engine(t, append([]string{"approve", tk.ID}, approver...)...)
		approved <- tk.ID
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo role-hello"}}
	params.SetProgressToken("bash-roles")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	tk := <-approved
	if tk == "" {
		t.FailNow()
	}
	if res.IsError || !strings.Contains(gwText(res), "role-hello") {
		t.Errorf("approved bash as the agent role: isError=%v %q", res.IsError, gwText(res))
	}
	if err := cs.Close(); err != nil {
		t.Log(err)
	}
	_ = cmd.Wait()
	if log := gwStderr(cmd); strings.Contains(log, "Permissions Violation") || strings.Contains(log, "permission_denied") {
		t.Errorf("the gateway asked for what the agent role may not:\n%s", log)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) == 0 || !strings.Contains(progress[0], "ticket "+tk) {
		t.Errorf("progress while waiting: %q, want notifications naming ticket %s", progress, tk)
	}
}

// gwStderr is what an `engine mcp serve` child of goClient wrote to stderr.
func gwStderr(cmd *exec.Cmd) string {
	if b, ok := cmd.Stderr.(*syncbuf.Buffer); ok {
		return b.String()
	}
	return ""
}
