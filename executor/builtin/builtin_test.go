package builtin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestTools(t *testing.T) {
	tools, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Action string
		Effect       descriptor.EffectClass
	}
	var got []row
	for _, tool := range tools {
		d := tool.Descriptor()
		got = append(got, row{d.Name, d.Action, d.Effect})
	}
	want := []row{
		{"apply_patch", "edit", descriptor.SideEffecting},
		{"bash", "bash", descriptor.SideEffecting},
		{"edit", "edit", descriptor.SideEffecting},
		{"glob", "glob", descriptor.ReadOnly},
		{"grep", "grep", descriptor.ReadOnly},
		{"question", "question", descriptor.ReadOnly},
		{"read", "read", descriptor.ReadOnly},
		{"read_file", "read", descriptor.ReadOnly},
		{"skill", "skill", descriptor.ReadOnly},
		{"todowrite", "todowrite", descriptor.Idempotent},
		{"webfetch", "webfetch", descriptor.ReadOnly},
		{"write", "edit", descriptor.SideEffecting},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := executor.NewRegistry(tools...); err != nil {
		t.Errorf("the built-ins do not form a registry: %v", err)
	}
}

// TestTestTools: the benchmark's and tests' tools are TestTools, apart from
// the production ones, and the two together form one registry.
func TestTestTools(t *testing.T) {
	tools, err := builtin.TestTools()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range tools {
		got = append(got, tool.Name())
	}
	if diff := cmp.Diff([]string{"echo", "echo_fx", "wait", "wait_fx", "append_fx"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	prod, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := executor.NewRegistry(append(prod, tools...)...); err != nil {
		t.Errorf("the built-ins and the test tools do not form a registry: %v", err)
	}
}

func TestEcho(t *testing.T) {
	for _, build := range []func() (*executor.Tool, error){builtin.Echo, builtin.EchoFx} {
		tool, err := build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := tool.Prepare(executor.Call{}, json.RawMessage(`{"text":"deploy to prod"}`))
		if err != nil {
			t.Fatal(err)
		}
		wantReqs := []descriptor.Request{{Action: tool.Name(), Resources: []string{"deploy to prod"}, Save: []string{"*"}}}
		if diff := cmp.Diff(wantReqs, p.Requests()); diff != "" {
			t.Errorf("%s requests (-want +got):\n%s", tool.Name(), diff)
		}
		if diff := cmp.Diff(executor.TextResult("deploy to prod"), p.Run(context.Background())); diff != "" {
			t.Errorf("%s result (-want +got):\n%s", tool.Name(), diff)
		}
		if _, err := tool.Prepare(executor.Call{}, nil); err == nil || err.Error() != "Invalid tool input: missing property 'text'" {
			t.Errorf("%s without text: %v", tool.Name(), err)
		}
	}
}
