package executor_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/executor"
)

func mustTool(t *testing.T, name string) *executor.Tool {
	t.Helper()
	tool, err := executor.New(name, "d", echoText)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func names(tools []*executor.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name()
	}
	return out
}

func TestRegistry(t *testing.T) {
	r, err := executor.NewRegistry(mustTool(t, "zeta"), mustTool(t, "alpha"), mustTool(t, "mid"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alpha", "mid", "zeta"}, names(r.Tools())); diff != "" {
		t.Errorf("Tools() sorted by name (-want +got):\n%s", diff)
	}
	if tool, ok := r.Lookup("mid"); !ok || tool.Name() != "mid" {
		t.Errorf("Lookup(mid) = %v, %v", tool, ok)
	}
	if _, ok := r.Lookup("nope"); ok {
		t.Error("Lookup(nope) found a tool")
	}
}

func TestRegistryAllOrNothing(t *testing.T) {
	tests := []struct {
		why   string
		tools []string // "" stands for a nil tool
		want  []error
	}{
		{why: "a name repeated in one call", tools: []string{"fresh", "dup", "dup"},
			want: []error{executor.ErrDuplicateTool}},
		{why: "a name already registered", tools: []string{"fresh", "base"},
			want: []error{executor.ErrDuplicateTool}},
		{why: "a nil tool", tools: []string{"fresh", ""},
			want: []error{executor.ErrNilTool}},
		{why: "every problem is reported", tools: []string{"base", "", "fresh"},
			want: []error{executor.ErrDuplicateTool, executor.ErrNilTool}},
	}
	for _, tt := range tests {
		r, err := executor.NewRegistry(mustTool(t, "base"))
		if err != nil {
			t.Fatal(err)
		}
		var tools []*executor.Tool
		for _, n := range tt.tools {
			if n == "" {
				tools = append(tools, nil)
				continue
			}
			tools = append(tools, mustTool(t, n))
		}
		err = r.Register(tools...)
		for _, w := range tt.want {
			if !errors.Is(err, w) {
				t.Errorf("%s: Register = %v, want %v", tt.why, err, w)
			}
		}
		if diff := cmp.Diff([]string{"base"}, names(r.Tools())); diff != "" {
			t.Errorf("%s: a failed Register added tools (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestNewRegistryAllOrNothing(t *testing.T) {
	r, err := executor.NewRegistry(mustTool(t, "a"), mustTool(t, "b"), mustTool(t, "a"))
	if !errors.Is(err, executor.ErrDuplicateTool) || r != nil {
		t.Errorf("NewRegistry = %v, %v; want no registry and ErrDuplicateTool", r, err)
	}
}

func TestRegistryDuplicateNameText(t *testing.T) {
	_, err := executor.NewRegistry(mustTool(t, "a"), mustTool(t, "a"))
	if err == nil || err.Error() != "duplicate tool name: a" {
		t.Errorf("NewRegistry = %v", err)
	}
	var zero executor.Registry
	if err := zero.Register(mustTool(t, "a")); err != nil {
		t.Errorf("the zero Registry is usable: %v", err)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	r, err := executor.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tool := mustTool(t, fmt.Sprintf("t%d", i))
			if err := r.Register(tool); err != nil {
				t.Error(err)
			}
			for range 100 {
				r.Lookup("t0")
				r.Tools()
			}
		})
	}
	wg.Wait()
	if got := len(r.Tools()); got != 8 {
		t.Errorf("%d tools registered, want 8", got)
	}
}
