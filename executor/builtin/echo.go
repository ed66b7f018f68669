package builtin

import (
	"context"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// EchoInput is the input of echo and echo_fx.
type EchoInput struct {
	Text string `json:"text" jsonschema:"description=The text to return"`
}

// Echo builds echo: a read-only tool that returns its text. It exists to exercise the
// engine end to end (permission, settle, replay) with no effect on the world.
func Echo() (*executor.Tool, error) {
	return newEcho("echo", "Return the given text unchanged.", descriptor.ReadOnly)
}

// EchoFx builds echo_fx: echo declared side-effecting, to exercise what the engine does
// only for such tools (ToolCallStarted, in-doubt recovery).
func EchoFx() (*executor.Tool, error) {
	return newEcho("echo_fx", "Return the given text unchanged (declared side-effecting).", descriptor.SideEffecting)
}

func newEcho(name, description string, effect descriptor.EffectClass) (*executor.Tool, error) {
	anything := []string{"*"} // every call's save pattern; requests are never modified
	return executor.New(name, description,
		func(_ context.Context, _ executor.Call, in EchoInput) (string, error) { return in.Text, nil },
		executor.WithEffect(effect), executor.Anywhere(),
		executor.WithRequests(func(_ executor.Call, in EchoInput) ([]descriptor.Request, error) {
			return []descriptor.Request{{Action: name, Resources: []string{in.Text}, Save: anything}}, nil
		}),
	)
}
