package builtin

import "strings"

// SimpleCommands returns every simple command bash would run from a
// command — in lists, pipelines, subshells, command and process
// substitutions, function bodies, and the inner commands of commands that
// run commands (xargs, find -exec, env, sudo, sh -c '…', …) — each as its
// source text, in order of appearance, without repeats; parsed is false when
// the command does not parse as bash, and then the whole text is the one
// command. Each one is a permission resource of a bash call, so `git *`
// cannot let `git log; rm -rf ~` through.
func SimpleCommands(command string) (cmds []string, parsed bool) {
	a := analyzeBash(command)
	if !a.parsed {
		return []string{strings.TrimSpace(command)}, false
	}
	seen := map[string]bool{}
	for _, c := range a.cmds {
		if !seen[c.text] {
			seen[c.text] = true
			cmds = append(cmds, c.text)
		}
	}
	if len(cmds) == 0 && strings.TrimSpace(command) != "" {
		// Only comments or only compound syntax without a command in it.
		return []string{strings.TrimSpace(command)}, true
	}
	return cmds, true
}
