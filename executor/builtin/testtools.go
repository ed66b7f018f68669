package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// TestToolInput is the input of the test tools.
type TestToolInput struct {
	Text string `json:"text" jsonschema:"description=The text to return"`
	// Path names a file in the location: wait and wait_fx block while it
	// exists; append_fx appends the text to it.
	Path string `json:"path" jsonschema:"description=A file name inside the workspace"`
	// Mark names a file in the location that wait and wait_fx append the
	// text to, as a line, when they start (an effect that can be counted).
	Mark string `json:"mark,omitempty" jsonschema:"description=A file name inside the workspace to mark the start in"`
}

// TestTools are the benchmark's and end-to-end tests' tools, installed only
// when asked for (engine serve --test-tools), never in an agent's catalogue by
// default: echo and echo_fx (see Echo and EchoFx) return their text; wait
// (read-only) and wait_fx (side-effecting) block while the file at path
// exists in the location (an engine can be killed while they run), then
// return the text; append_fx appends a line of text to the file at path (an
// effect that can be counted).
func TestTools() ([]*executor.Tool, error) {
	mk := func(name, desc string, effect descriptor.EffectClass, fn func(context.Context, executor.Call, TestToolInput) (string, error)) (*executor.Tool, error) {
		return executor.New(name, desc, fn, executor.WithEffect(effect),
			executor.WithRequests(func(_ executor.Call, in TestToolInput) ([]descriptor.Request, error) {
				return []descriptor.Request{{Action: name, Resources: []string{in.Text}, Save: []string{"*"}}}, nil
			}))
	}
	var tools []*executor.Tool
	for _, build := range []func() (*executor.Tool, error){Echo, EchoFx} {
		t, err := build()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	for _, t := range []struct {
		name, desc string
		effect     descriptor.EffectClass
		fn         func(context.Context, executor.Call, TestToolInput) (string, error)
	}{
		{"wait", "Test tool: wait while a file exists, then return the text.", descriptor.ReadOnly, waitFor},
		{"wait_fx", "Test tool: wait while a file exists, then return the text (side-effecting).", descriptor.SideEffecting, waitFor},
		{"append_fx", "Test tool: append the text as a line to a file.", descriptor.SideEffecting, appendLine},
	} {
		tool, err := mk(t.name, t.desc, t.effect, t.fn)
		if err != nil {
			return nil, err
		}
		tools = append(tools, tool)
	}
	return tools, nil
}

func testPath(c executor.Call, in TestToolInput) (string, error) {
	p, err := resolveInLocation(c, in.Path)
	if err != nil {
		return "", err
	}
	return filepath.Join(c.Location, p.Rel), nil
}

func waitFor(ctx context.Context, c executor.Call, in TestToolInput) (string, error) {
	p, err := testPath(c, in)
	if err != nil {
		return "", err
	}
	if in.Mark != "" {
		if _, err := appendLine(ctx, c, TestToolInput{Text: in.Text, Path: in.Mark}); err != nil {
			return "", err
		}
	}
	for {
		if _, err := os.Stat(p); err != nil {
			return in.Text, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func appendLine(_ context.Context, c executor.Call, in TestToolInput) (string, error) {
	p, err := testPath(c, in)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, in.Text); err != nil {
		return "", err
	}
	return in.Text, nil
}
