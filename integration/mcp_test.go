package integration

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// An MCP server's tools through the gate, over stdio and over HTTP, with
// the test server as a real process: they appear in the catalogue; one
// call is allowed, one asks and is approved, one is denied by an
// mcp__test__danger* rule (wholly denied: not in the catalogue, refused as
// unknown, never sent to the server); the results are committed; a large
// result spills; the server killed during a call gives the model an error,
// then the host reconnects and a call works; a changed tool list makes a
// call advertised before it stale.
func TestMCPServersToolsThroughTheGate(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) { testMCPGate(t, transport) })
	}
}

func testMCPGate(t *testing.T, transport string) {
	bin := mcpBin(t)
	dir := t.TempDir()
	flags := mcptest.Flags{Calls: filepath.Join(dir, "calls"), ToolsFile: filepath.Join(dir, "tools")}
	if err := os.WriteFile(flags.ToolsFile, []byte("v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var srv *mcptest.HTTP
	server := "    command: " + yamlList(bin.Command(flags)) + "\n"
	if transport == "http" {
		srv = bin.StartHTTP(t, "", flags)
		server = "    url: " + strconv.Quote(srv.URL) + "\n"
	}
	uf := writeUserFile(t, mcpRules+"      mcp__test__mixed: ask\nmcp:\n  test:\n"+server+"    trust: true\n")
	s := steptest.Start(t, "")
	h := startMCPHost(t, s, uf, "")
	ctx := ctxT(t)
	ws := t.TempDir()

	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: ws})
	if err != nil {
		t.Fatal(err)
	}
	names := catalogNames(info.Catalog)
	for _, want := range []string{"mcp__test__echo", "mcp__test__mixed", "mcp__test__big", "mcp__test__pid", "mcp__test__slow"} {
		if !slices.Contains(names, want) {
			t.Fatalf("first catalogue %v lacks %s", names, want)
		}
	}
	if slices.Contains(names, "mcp__test__danger_rm") {
		t.Errorf("a wholly denied tool is in the catalogue: %v", names)
	}
	run, n := info.Run, 0
	next := func(id, tool, args string) *commands.StepOutcome {
		n++
		return mcpStep(t, h, run, n, id, tool, args)
	}

	// Allowed.
	if out := next("e1", "mcp__test__echo", `{"text":"hello over `+transport+`"}`); out.Results[0].Verdict != events.VerdictAllow || out.Results[0].Content != "hello over "+transport {
		t.Errorf("echo: %+v", out.Results)
	}
	// Asks, approved.
	out := next("m1", "mcp__test__mixed", `{}`)
	if out.Final || len(out.Tickets) != 1 {
		t.Fatalf("mixed should ask: %+v", out)
	}
	rep, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: events.ReplyOnce, Principal: "tester"})
	if err != nil || rep.Outcome == nil || !strings.Contains(rep.Outcome.Results[0].Content, "hello") || len(rep.Outcome.Results[0].Parts) == 0 {
		t.Fatalf("approved mixed: %+v, %v", rep, err)
	}
	// Denied by mcp__test__danger*: not shown, refused, never sent.
	if out := next("d1", "mcp__test__danger_rm", `{"path":"/"}`); out.Results[0].Verdict != events.VerdictReject || out.Results[0].Content != "Unknown tool: mcp__test__danger_rm" {
		t.Errorf("danger_rm: %+v", out.Results)
	}
	// Spills: 128 KiB over the 51,200-byte limit.
	big := next("b1", "mcp__test__big", `{"kib":128}`)
	if !strings.Contains(big.Results[0].Content, "output truncated; full content saved to") {
		t.Errorf("big: not a preview: %.200s", big.Results[0].Content)
	}
	var stored *events.OutputFileStored
	for _, e := range eventsOf(t, h, run) {
		if f, ok := e.(events.OutputFileStored); ok {
			stored = &f
		}
	}
	if stored == nil || stored.Bytes != 128*1024 {
		t.Errorf("OutputFileStored = %+v, want the whole 128 KiB", stored)
	}

	// Killed during a call: the model reads that the server is unavailable.
	pid := next("p1", "mcp__test__pid", `{}`).Results[0].Content
	done := make(chan *commands.StepOutcome, 1)
	n++
	go func(n int) {
		o, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: n, Calls: []commands.CallRequest{{ID: "s1", Tool: "mcp__test__slow", Args: []byte(`{"ms":20000}`)}}})
		if err != nil {
			t.Error(err)
		}
		done <- o
	}(n)
	time.Sleep(500 * time.Millisecond)
	if srv != nil {
		srv.Kill()
	} else {
		p, err := strconv.Atoi(pid)
		if err != nil {
			t.Fatalf("pid %q", pid)
		}
		if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case o := <-done:
		if o == nil || !o.Results[0].IsError || !strings.HasPrefix(o.Results[0].Content, "MCP server test is unavailable: ") {
			t.Fatalf("slow while killed: %+v", o)
		}
		t.Logf("the call during the kill: %q", o.Results[0].Content)
	case <-time.After(15 * time.Second):
		t.Fatal("the call to a killed server did not end")
	}
	if srv != nil { // the HTTP server comes back on its address
		u, _ := url.Parse(srv.URL)
		bin.StartHTTP(t, u.Host, flags) // killed when the test ends
	}
	// Reconnected: a call works again.
	var last *commands.StepOutcome
	eventually(t, 20*time.Second, "a call after the reconnect", func() bool {
		last = next(fmt.Sprintf("r%d", n), "mcp__test__echo", `{"text":"back"}`)
		return last.Results[0].Content == "back"
	})

	// A changed tool list: a call advertised before settles stale.
	before, _ := h.Proj.Registry()
	oldScope := before["mcp__test__echo"].Scope
	if err := os.WriteFile(flags.ToolsFile, []byte("v2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The new scope is registered, then the old one closed: two commits.
	eventually(t, 20*time.Second, "the changed tool list registered and the old scope closed (a tool the server no longer lists not registered)", func() bool {
		reg, _ := h.Proj.Registry()
		_, added := reg["mcp__test__added"]
		return added && reg["mcp__test__echo"].Scope != oldScope && reg["mcp__test__danger_rm"].Name == ""
	})
	if out := next("x1", "mcp__test__echo", `{"text":"stale?"}`); out.Results[0].Content != "Stale tool call: mcp__test__echo" {
		t.Errorf("echo after the change: %+v", out.Results)
	}
	cat, err := h.Materialize(ctx, commands.MaterializeRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if names := catalogNames(*cat); !slices.Contains(names, "mcp__test__added") || slices.Contains(names, "mcp__test__danger_rm") {
		t.Errorf("catalogue after the change: %v", names)
	}
	if out := next("a1", "mcp__test__echo", `{"text":"fresh"}`); out.Results[0].Content != "fresh" {
		t.Errorf("echo from the new catalogue: %+v", out.Results)
	}
	// Changed back: the first set's scope is closed for ever, so it comes
	// back under a generation of it, and its tools work again.
	if err := os.WriteFile(flags.ToolsFile, []byte("v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the first tool list back", func() bool {
		reg, _ := h.Proj.Registry()
		_, removed := reg["mcp__test__added"]
		return !removed && reg["mcp__test__danger_rm"].Name != "" && reg["mcp__test__echo"].Scope != oldScope
	})
	if _, err := h.Materialize(ctx, commands.MaterializeRequest{Run: run}); err != nil {
		t.Fatal(err)
	}
	if out := next("v1", "mcp__test__echo", `{"text":"v1 again"}`); out.Results[0].Content != "v1 again" {
		t.Errorf("echo of the first tool list again: %+v", out.Results)
	}

	// Committed: the log's results are the model's.
	logged := map[string]string{}
	for _, e := range eventsOf(t, h, run) {
		if res, ok := e.(events.ToolResultRecorded); ok && len(res.Parts) > 0 {
			logged[res.CallID] += res.Parts[0].Text
		}
	}
	if logged["e1"] != "hello over "+transport || logged["m1"] != "hello" || logged["d1"] != "Unknown tool: mcp__test__danger_rm" || logged["p1"] != pid {
		t.Errorf("results in the log: %q", logged)
	}
	r, err := h.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(r, 1); got != "hello over "+transport {
		t.Errorf("step 1's committed result %q", got)
	}
	if got := resultText(r, 2); !strings.HasPrefix(got, "hello") {
		t.Errorf("step 2's committed result %q", got)
	}
	calls, _ := os.ReadFile(flags.Calls)
	if strings.Contains(string(calls), "danger_rm") || !strings.Contains(string(calls), "mixed") {
		t.Errorf("the server's calls:\n%s", calls)
	}
}

// resultText is the text of step n's first call's committed result.
func resultText(r *projection.Run, n int) string {
	s := r.Step(n)
	if s == nil || len(s.Calls) == 0 || s.Calls[0].Result == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range s.Calls[0].Result.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// What a run may see of an MCP server is its own configuration's: a
// project file that narrows the server to an allow-list shows only those
// tools to its runs (a call to another is refused as unknown), one that
// says deny_all shows none, and a location without a project file sees
// them all; the server's ticket_ttl caps the deadline of its tickets. Every
// run is served by the one connection the host keeps.
func TestMCPRunsSeeTheirConfiguration(t *testing.T) {
	bin := mcpBin(t)
	uf := writeUserFile(t, mcpRules+"      mcp__test__echo: ask\nmcp:\n  test:\n    command: "+yamlList(bin.Command(mcptest.Flags{}))+"\n    ticket_ttl: 1m\n")
	s := steptest.Start(t, "")
	h := startMCPHost(t, s, uf, "")
	ctx := ctxT(t)
	project := func(text string) string {
		ws := t.TempDir()
		if text != "" {
			if err := os.MkdirAll(filepath.Join(ws, ".stepgate"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, ".stepgate", "config.yaml"), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return ws
	}
	start := func(ws string) *commands.RunInfo {
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: ws})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	all := start(project(""))
	if names := catalogNames(all.Catalog); len(names) != 9 { // ten tools, danger_rm denied
		t.Errorf("the whole server: %v", names)
	}
	narrow := start(project("mcp:\n  test: {allow: [echo, \"p*\"]}\n"))
	if names := catalogNames(narrow.Catalog); !slices.Equal(names, []string{"mcp__test__echo", "mcp__test__pid"}) {
		t.Errorf("narrowed to echo and p*: %v", names)
	}
	if out := mcpStep(t, h, narrow.Run, 1, "c", "mcp__test__big", `{"kib":1}`); out.Results[0].Content != "Unknown tool: mcp__test__big" {
		t.Errorf("a tool outside the allow-list: %+v", out.Results)
	}
	if out := mcpStep(t, h, narrow.Run, 2, "c", "mcp__test__pid", `{}`); out.Results[0].IsError {
		t.Errorf("an allowed tool: %+v", out.Results)
	}
	before := time.Now()
	out := mcpStep(t, h, narrow.Run, 3, "c", "mcp__test__echo", `{"text":"x"}`)
	if len(out.Tickets) != 1 || out.Tickets[0].Deadline == nil || out.Tickets[0].Deadline.After(before.Add(time.Minute+5*time.Second)) {
		t.Errorf("echo's ticket should expire within the server's ticket_ttl (1m): %+v", out.Tickets)
	}
	none := start(project("mcp:\n  test: {deny_all: true}\n"))
	if names := catalogNames(none.Catalog); len(names) != 0 {
		t.Errorf("deny_all: %v", names)
	}
	// A project's own server is not started unless the user's file enables it.
	own := start(project("mcp:\n  proj:\n    command: " + yamlList(bin.Command(mcptest.Flags{})) + "\n"))
	for _, n := range catalogNames(own.Catalog) {
		if strings.HasPrefix(n, "mcp__proj__") {
			t.Errorf("a project's server runs without the user's consent: %s", n)
		}
	}
}

// A run started on one host, its MCP call submitted to another that has
// no connection to the server: that host connects first, then runs it.
func TestMCPCallOnAnotherHost(t *testing.T) {
	bin := mcpBin(t)
	uf := writeUserFile(t, mcpRules+"mcp:\n  test:\n    command: "+yamlList(bin.Command(mcptest.Flags{}))+"\n")
	s := steptest.Start(t, "")
	a, b := startMCPHost(t, s, uf, ""), startMCPHost(t, s, uf, "")
	info, err := a.StartRun(ctxT(t), commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	caughtUp(t, a, b)
	if out := mcpStep(t, b, info.Run, 1, "c", "mcp__test__echo", `{"text":"on b"}`); out.Results[0].Content != "on b" {
		t.Errorf("the call on the other host: %+v", out.Results)
	}
}

// Servers that do not come up — one that never answers, one refusing
// connections, one whose secret is missing — are absent from the first
// catalogue, and the run starts once the start's wait is over; the missing
// secret is named by its reference.
func TestMCPServerDownAtRunStart(t *testing.T) {
	bin := mcpBin(t)
	uf := writeUserFile(t, mcpRules+"mcp:\n"+
		"  test:\n    command: "+yamlList(bin.Command(mcptest.Flags{}))+"\n"+
		"  mute:\n    command: [sleep, \"3600\"]\n"+
		"  gone:\n    url: \"http://127.0.0.1:1/mcp\"\n"+
		"  locked:\n    url: \"http://127.0.0.1:1/mcp\"\n    headers: {Authorization: \"Bearer secret://STEPGATE_TEST_MISSING\"}\n")
	s := steptest.Start(t, "")
	// The wait is long enough for the server that is up to start on a
	// busy machine; the one that never answers would hold the start past
	// ctxT's deadline if the wait did not end it.
	h := startMCPHostWith(t, s, uf, "", commands.MCPOptions{StartWait: 10 * time.Second})
	ws := t.TempDir()
	info, err := h.StartRun(ctxT(t), commands.StartRunRequest{Location: ws})
	if err != nil {
		t.Fatalf("start_run with a server that never answers: %v", err)
	}
	for _, n := range catalogNames(info.Catalog) {
		if !strings.HasPrefix(n, "mcp__test__") {
			t.Errorf("a server that is not up has a tool in the catalogue: %s", n)
		}
	}
	if !slices.Contains(catalogNames(info.Catalog), "mcp__test__echo") {
		t.Errorf("the server that is up is missing: %v", catalogNames(info.Catalog))
	}
	list, err := h.MCPServers(ctxT(t), commands.MCPServersRequest{Location: ws})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]commands.MCPServerState{}
	for _, st := range list.Servers {
		states[st.Name] = st
	}
	if st := states["locked"]; st.State != "down" || !strings.Contains(st.Error, "secret://STEPGATE_TEST_MISSING") {
		t.Errorf("a missing secret: %+v", st)
	}
	if st := states["gone"]; st.State != "down" || !strings.Contains(st.Error, "connection refused") {
		t.Errorf("a refused connection: %+v", st)
	}
	// Still connecting, or down once its own connect timeout passed (which
	// of the two depends on how busy the machine is): never ready.
	if st := states["mute"]; (st.State != "connecting" && st.State != "down") || len(st.Tools) != 0 {
		t.Errorf("a server that never answers: %+v", st)
	}
	if st := states["test"]; st.State != "ready" || len(st.Tools) != 10 {
		t.Errorf("the server that is up: %+v", st)
	}
}
