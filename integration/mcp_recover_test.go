package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/projection"
)

// An engine killed with SIGKILL while a side-effecting MCP call runs
// restarts with the MCP server dead (its command now starts a process that
// never answers): recovery settles the call as indeterminate without
// starting the server or waiting for it (it waited CallWait, 10 s a run,
// and settled the call as not installed).
func TestMCPCallInDoubtSettlesWithoutItsServer(t *testing.T) {
	bin := mcpBin(t)
	env := []string{xdgConfig(t, "agents:\n  build:\n    permission:\n      \"*\": allow\n"+
		"mcp:\n  test:\n    command: "+yamlList(bin.Command(mcptest.Flags{}))+"\n    trust: true\n")}
	data, addr, ws := t.TempDir(), freeAddr(t), t.TempDir()
	args := []string{"--data", data, "--listen", addr, "--host", "proc"}
	srv := serveEnv(t, env, args...)
	nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	if names := catalogNames(info.Catalog); !strings.Contains(strings.Join(names, " "), "mcp__test__slow") {
		t.Fatalf("catalogue %v", names)
	}
	b, _ := json.Marshal(commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
		{ID: "c1", Tool: "mcp__test__slow", Args: json.RawMessage(`{"ms":600000}`)}}})
	// Nobody waits for the step's answer: the engine dies first.
	if err := nc.PublishRequest("stepgate.submit_step", nats.NewInbox(), b); err != nil {
		t.Fatal(err)
	}
	step1 := func() projection.Step {
		r, err := ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: info.Run})
		if err != nil || len(r.Steps) != 1 {
			return projection.Step{}
		}
		return r.Steps[0]
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s := step1(); len(s.Calls) == 1 && s.Calls[0].Attempts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the step never reached its pre-effect commit")
		}
	}
	srv.kill9(t)
	// From now on the server's command starts a process that says it was
	// started and never answers.
	started := filepath.Join(t.TempDir(), "started")
	if err := os.Remove(bin.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin.Path, []byte("#!/bin/sh\necho started >> "+started+"\nexec sleep 60\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	srv = serveEnv(t, env, args...)
	defer srv.stop(t)
	var s projection.Step
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s = step1(); s.Final {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("step 1 not settled after the restart: %+v\nengine:\n%s", s, srv.stderr.String())
		}
	}
	if c := s.Calls[0]; c.Result == nil || c.Result.Parts[0].Text != commands.IndeterminateResult || c.Attempts != 1 {
		t.Errorf("the MCP call in doubt settled as %+v, want indeterminate, started once", c.Result)
	}
	if b, err := os.ReadFile(started); err == nil {
		t.Errorf("recovery started the dead server (%q): it runs nothing of it", b)
	}
}
