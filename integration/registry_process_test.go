package integration

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
)

// A tool registered in the location layer through the service survives the
// engine process being killed: the restarted process rebuilds the layer from
// the log and advertises it (and, lacking an implementation, answers a call
// with "not installed" rather than running anything else).
func TestLocationRegistrationSurvivesAHostProcessRestart(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	addr := freeAddr(t)
	srv := serve(t, data, addr)
	nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	tool := map[string]any{"name": "lint", "description": "Lint the workspace.",
		"input_schema": json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`),
		"effect":       "read_only"}
	reg := must(ask[commands.RegisterResult](t, nc, "register_tools", map[string]any{"scope": "plugin-x", "tools": []any{tool}}))
	if reg.Identities["lint"] == "" {
		t.Fatalf("register: %+v", reg)
	}
	srv.kill9(t)
	srv = serve(t, data, addr)
	defer srv.cmd.Process.Kill()

	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	var found string
	for _, d := range info.Catalog.Tools {
		if d.Name == "lint" {
			found = d.Description
		}
	}
	if found != "Lint the workspace." {
		t.Fatalf("after the restart the catalogue has lint = %q; tools %+v", found, info.Catalog.Tools)
	}
	out := must(ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c", Tool: "lint", Args: json.RawMessage(`{"path":"."}`)}}}))
	if got := out.Results[0].Content; got != "Tool is not installed on this host: lint" {
		t.Errorf("a call of a tool with no implementation here: %q", got)
	}
}
