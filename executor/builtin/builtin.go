// Package builtin holds the tools every Stepgate host installs in code.
package builtin

import "github.com/stepgate/stepgate/executor"

// Tools returns the built-in tools, sorted by name: apply_patch, bash, echo,
// echo_fx, edit, glob, grep, question, read, read_file, skill, todowrite,
// webfetch and write (websearch needs an endpoint: see Websearch).
func Tools() ([]*executor.Tool, error) {
	var tools []*executor.Tool
	for _, build := range []func() (*executor.Tool, error){ApplyPatch, Bash, Echo, EchoFx, Edit, Glob, Grep, QuestionTool, Read, ReadFile, Skill, TodoWrite, Webfetch, Write} {
		t, err := build()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}
