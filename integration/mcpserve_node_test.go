package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/internal/syncbuf"
)

// gwJSInstall is what a machine without the JavaScript clients is told to run.
const gwJSInstall = "npm ci --prefix integration/mcpjs (or run scripts/test, which runs it when integration/mcpjs/node_modules is missing; Node 20 or later: apt-get install -y nodejs npm)"

// gwJS is the directory of the JavaScript MCP clients, installed: it
// fails the test, naming the install command, where node or the packages
// are missing.
func gwJS(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the MCP server is checked with the official TypeScript SDK and the MCP Inspector's CLI, and there is no node on PATH: install Node and run %s", gwJSInstall)
	}
	dir, err = filepath.Abs("mcpjs")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"sdk", "inspector-cli"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
			t.Fatalf("the MCP clients are not installed in %s (%v): run %s", dir, err, gwJSInstall)
		}
	}
	return node, dir
}

// gwJSEvent is one line client.mjs prints.
type gwJSEvent struct {
	Event    string   `json:"event"`
	Names    []string `json:"names"`
	IsError  bool     `json:"isError"`
	Text     string   `json:"text"`
	Progress int      `json:"progress"`
	Asked    []string `json:"asked"`
}

// The official TypeScript MCP SDK (@modelcontextprotocol/sdk, pinned in
// integration/mcpjs/package-lock.json) drives `engine mcp serve` over
// stdio: it lists the tools, an allowed read gets the file, a bash call
// that asks gets its result once `engine approve` (another process)
// answers the ticket, and a denied read is refused. The MCP Inspector's
// CLI lists the same tools as the go-sdk's client.
func TestMCPServeTypeScriptSDKAndInspector(t *testing.T) {
	node, dir := gwJS(t)
	s := newGWSetup(t)
	goCS, _ := s.goClient(t, nil)
	want := gwToolNames(t, goCS)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs"), engineBin}, s.mcpArgs("--session", "ts", "--wait", "1m", "--progress-every", "200ms")...)...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	events := map[string]gwJSEvent{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev gwJSEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("client.mjs printed %q: %v", sc.Text(), err)
		}
		events[ev.Event] = ev
		if ev.Event == "progress" { // the call waits, and says so: answer it from another process
			go func() {
				tk := s.awaitTicket(t, "bash")
				engine(t, "approve", tk.ID, "--nats", s.url)
			}()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client.mjs: %v\n%s", err, stderr.String())
	}
	if got := events["tools"].Names; !slices.Equal(got, want) {
		t.Errorf("TypeScript SDK's tools/list %v, the go-sdk's %v", got, want)
	}
	if ev := events["allowed"]; ev.IsError || !strings.Contains(ev.Text, "hello from notes") {
		t.Errorf("allowed read: %+v", ev)
	}
	if ev := events["denied"]; !ev.IsError || !strings.Contains(ev.Text, `read "secret*"`) {
		t.Errorf("denied read: %+v, want isError naming the rule", ev)
	}
	if ev := events["asked"]; ev.IsError || !strings.Contains(ev.Text, "approved-from-elsewhere") || ev.Progress == 0 {
		t.Errorf("bash after engine approve: %+v, want its output after progress notifications", ev)
	}

	// With --elicit, the TypeScript client (on a protocol before multi
	// round-trip requests: the SDK elicits directly) answers the ticket.
	el := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs"), "--elicit", engineBin}, s.mcpArgs("--session", "ts-elicit", "--elicit")...)...)
	var elErr syncbuf.Buffer
	el.Stderr = &elErr
	elOut, err := el.Output()
	if err != nil {
		t.Fatalf("client.mjs --elicit: %v\n%s", err, elErr.String())
	}
	var ev gwJSEvent
	if err := json.Unmarshal(elOut, &ev); err != nil || ev.Event != "elicited" {
		t.Fatalf("client.mjs --elicit printed %q: %v", elOut, err)
	}
	if ev.IsError || !strings.Contains(ev.Text, "approved-in-the-client") || len(ev.Asked) != 1 || !strings.Contains(ev.Asked[0], "echo approved-in-the-client") {
		t.Errorf("bash approved through the TypeScript client's elicitation: %+v", ev)
	}
	if r := s.show(t, gwRun(s, "ts-elicit")); len(r.Tickets) != 1 || r.Tickets[0].Resolution == nil || r.Tickets[0].Resolution.Principal != "mcp-client:stepgate-ts-test" {
		t.Errorf("tickets: %+v, want one resolved by mcp-client:stepgate-ts-test", r.Tickets)
	}

	// The Inspector's CLI (inspector-cli 1.0.3: the Inspector 2 needs Node
	// 22.19). It looks for its own package.json at ../package.json from
	// the working directory, so it runs from its build directory.
	insp := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js"), "--cli", engineBin},
		s.mcpArgs("--session", "inspector", "--method", "tools/list")...)...)
	insp.Dir = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector-cli", "build")
	var ierr syncbuf.Buffer
	insp.Stderr = &ierr
	listing, err := insp.Output()
	if err != nil {
		t.Fatalf("mcp-inspector-cli --method tools/list: %v\n%s", err, ierr.String())
	}
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(listing, &list); err != nil {
		t.Fatalf("mcp-inspector-cli printed %q: %v", listing, err)
	}
	var got []string
	for _, tool := range list.Tools {
		got = append(got, tool.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the Inspector's CLI lists %v, the go-sdk's client %v", got, want)
	}
}
