// Package builtin holds the tools every Stepgate host installs in code
// (Tools), and the test tools a host installs only when asked for
// (TestTools: engine serve --test-tools).
package builtin

import "github.com/stepgate/stepgate/executor"

// Tools returns the built-in production tools, sorted by name: apply_patch,
// bash, edit, glob, grep, question, read, read_file, skill, todowrite,
// webfetch and write (websearch needs an endpoint: see Websearch). The
// benchmark's and tests' tools (echo, echo_fx, wait, wait_fx, append_fx) are
// not among them: see TestTools.
func Tools() ([]*executor.Tool, error) {
	var tools []*executor.Tool
	for _, build := range []func() (*executor.Tool, error){ApplyPatch, Bash, Edit, Glob, Grep, QuestionTool, Read, ReadFile, Skill, TodoWrite, Webfetch, Write} {
		t, err := build()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}
