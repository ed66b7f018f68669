// Package executortest builds tool registries for tests: the built-in tools
// plus tools that count their executions, so a test can tell how often a call
// really ran.
package executortest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// Counts are the executions of the counting tools.
type Counts struct {
	// ReadOnly counts "count".
	ReadOnly atomic.Int64
	// SideEffecting counts "count_fx".
	SideEffecting atomic.Int64
}

// TextInput is the counting tools' input.
type TextInput struct {
	Text string `json:"text"`
}

// Registry returns the built-in tools and the test tools (echo, echo_fx,
// wait, wait_fx, append_fx: builtin.TestTools) plus "count" (read-only) and
// "count_fx" (side-effecting): each adds one to c and returns its text, and
// raises one permission request, its name on [text], saved as "*"; and
// "repeat" (read-only) and "repeat_fx" (side-effecting), which return their
// text repeated times times.
func Registry(t testing.TB, c *Counts) *executor.Registry {
	t.Helper()
	tools, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	more, err := builtin.TestTools()
	if err != nil {
		t.Fatal(err)
	}
	tools = append(tools, more...)
	mk := func(name string, effect descriptor.EffectClass, n *atomic.Int64) *executor.Tool {
		tool, err := executor.New(name, "Counts its executions and returns its text.",
			func(_ context.Context, _ executor.Call, in TextInput) (string, error) {
				n.Add(1)
				return in.Text, nil
			}, executor.WithEffect(effect),
			executor.WithRequests(func(_ executor.Call, in TextInput) ([]descriptor.Request, error) {
				return []descriptor.Request{{Action: name, Resources: []string{in.Text}, Save: []string{"*"}}}, nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	type repeatIn struct {
		Text  string `json:"text"`
		Times int    `json:"times"`
	}
	mkRepeat := func(name string, effect descriptor.EffectClass) *executor.Tool {
		tool, err := executor.New(name, "Returns its text repeated: large output from a small call.",
			func(_ context.Context, _ executor.Call, in repeatIn) (string, error) {
				return strings.Repeat(in.Text, in.Times), nil
			}, executor.WithEffect(effect))
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	reg, err := executor.NewRegistry(append(tools, mkRepeat("repeat", descriptor.ReadOnly), mkRepeat("repeat_fx", descriptor.SideEffecting),
		mk("count", descriptor.ReadOnly, &c.ReadOnly), mk("count_fx", descriptor.SideEffecting, &c.SideEffecting))...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
