package builtin

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// SimpleCommands returns every simple command found anywhere in a shell
// command — in lists, pipelines, subshells, command and process
// substitutions, function bodies — each as its source text, in order of
// appearance; parsed is false when the command does not parse, and then the
// whole text is the one command. Each one is a permission resource of a bash
// call, so `git *` cannot let `git log; rm -rf ~` through.
func SimpleCommands(command string) (cmds []string, parsed bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return []string{strings.TrimSpace(command)}, false
	}
	seen := map[string]bool{}
	add := func(n syntax.Node) {
		start, end := int(n.Pos().Offset()), int(n.End().Offset())
		if start < 0 || end > len(command) || start >= end {
			return
		}
		text := strings.TrimSpace(command[start:end])
		if text != "" && !seen[text] {
			seen[text] = true
			cmds = append(cmds, text)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			add(n)
		case *syntax.DeclClause:
			add(n)
		}
		return true
	})
	if len(cmds) == 0 && strings.TrimSpace(command) != "" {
		// Only comments or only compound syntax without a command in it.
		return []string{strings.TrimSpace(command)}, true
	}
	return cmds, true
}
