// Package builtin holds the tools every Stepgate host installs in code.
package builtin

import "github.com/stepgate/stepgate/executor"

// Tools returns the built-in tools, sorted by name: bash, echo, echo_fx and
// read_file.
func Tools() ([]*executor.Tool, error) {
	var tools []*executor.Tool
	for _, build := range []func() (*executor.Tool, error){Bash, Echo, EchoFx, ReadFile} {
		t, err := build()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}
