package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// docCommand is one engine command written in the docs or typed by a
// script: the verb (or "verb sub") and the flags it names.
type docCommand struct {
	where string // file:line
	verb  string
	flags []string
	known bool // verb names a verb or subcommand of the binary
}

// exemptMark, an HTML comment on the line before a code block, says why a
// block's commands are not typed by any script (a 3-node cluster, TLS, a
// real model's key): their verbs and flags are still checked against the
// binary.
const exemptMark = "<!-- not run by the scripts:"

// altRe is a synopsis's alternatives (openai|anthropic), not a pipe.
var altRe = regexp.MustCompile(`(\S)\|(\S)`)

// scriptExec is a script line that runs a program (exec, ! exec, exits
// N), and scriptBackground the &name& that sends it to the background.
var (
	scriptExec       = regexp.MustCompile(`^(!\s+)?(exec|exits\s+\d+)\s+`)
	scriptBackground = regexp.MustCompile(`&\w*&$`)
)

// engineCommands are the engine commands of a shell text (a code block,
// or a script's line): what follows `engine`, `./engine`, a path ending
// in /engine, or `go run ./cmd/engine`, with the environment assignments
// before it left out. Text that is not shell (a timeline, a diagram) is
// skipped line by line.
func engineCommands(text string) []shellCommand {
	text = altRe.ReplaceAllString(text, "$1/$2")
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil {
		if !strings.Contains(text, "\n") {
			return nil
		}
		var all []shellCommand
		for i, line := range strings.Split(text, "\n") {
			for _, c := range engineCommands(line) {
				c.line += i
				all = append(all, c)
			}
		}
		return all
	}
	var out []shellCommand
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		words := make([]string, len(call.Args))
		for i, w := range call.Args {
			words[i] = w.Lit() // "" for a quoted or expanded word: never a flag
		}
		line := int(call.Pos().Line()) - 1
		switch {
		case words[0] == "engine" || strings.HasSuffix(words[0], "/engine"):
			out = append(out, shellCommand{line, words[1:]})
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/engine":
			out = append(out, shellCommand{line, words[3:]})
		}
		return true
	})
	return out
}

// shellCommand is an engine command's arguments and its line in the text
// it was found in, from 0.
type shellCommand struct {
	line int
	args []string
}

// parseCommand names a command's verb and flags; a bracket of a synopsis
// ([--as WHO]) is its flag.
func parseCommand(where string, args []string, sets map[string]*flag.FlagSet) docCommand {
	c := docCommand{where: where}
	if len(args) == 0 {
		return c
	}
	c.verb = args[0]
	if len(args) > 1 {
		if _, ok := sets[args[0]+" "+args[1]]; ok {
			c.verb = args[0] + " " + args[1]
		}
	}
	_, c.known = sets[c.verb]
	for _, a := range args[1:] {
		a = strings.TrimLeft(a, "[")
		a = strings.TrimRight(a, "]")
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		c.flags = append(c.flags, name)
	}
	return c
}

// docBlock is a fenced code block of a page, with its first line's number
// and whether an exemptMark precedes it.
type docBlock struct {
	file   string
	line   int
	text   string
	exempt bool
}

// docBlocks are the fenced code blocks of README.md and every page under
// docs/ that may hold shell: none of another language (yaml, json,
// mermaid...).
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && !strings.Contains(p, filepath.Join("docs", "reference")) {
			files = append(files, p) // the references are generated, from the same flag sets
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		var cur *docBlock
		prev := ""
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			fence := strings.HasPrefix(line, "```")
			switch {
			case fence && cur == nil:
				lang := strings.TrimSpace(strings.TrimPrefix(line, "```"))
				cur = &docBlock{file: rel, line: n + 1, exempt: strings.HasPrefix(prev, exemptMark)}
				if lang != "" && lang != "sh" && lang != "bash" && lang != "console" && lang != "shell" {
					cur.file = "" // not shell
				}
			case fence:
				if cur.file != "" {
					blocks = append(blocks, consoleInput(*cur))
				}
				cur = nil
			case cur != nil:
				cur.text += line + "\n"
			}
			if strings.TrimSpace(line) != "" {
				prev = line
			}
		}
	}
	return blocks
}

// consoleInput is a block as a shell reads it: where some lines are
// prompts ("$ engine version"), only those are typed (the others are what
// was printed; they stay blank lines, keeping the numbering).
func consoleInput(b docBlock) docBlock {
	lines := strings.Split(b.text, "\n")
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "$ ") }) {
		return b
	}
	for i, l := range lines {
		lines[i] = ""
		if rest, ok := strings.CutPrefix(l, "$ "); ok {
			lines[i] = rest
		}
	}
	b.text = strings.Join(lines, "\n")
	return b
}

// scriptCommands are the engine commands the CLI scripts type (exec,
// ! exec, exits N).
func scriptCommands(t *testing.T, sets map[string]*flag.FlagSet) []docCommand {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "script", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	var out []docCommand
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "-- ") {
				break // the archive's files
			}
			m := scriptExec.FindString(line)
			if m == "" {
				continue
			}
			line = strings.TrimSpace(scriptBackground.ReplaceAllString(line[len(m):], ""))
			for _, c := range engineCommands(line) {
				out = append(out, parseCommand(fmt.Sprintf("%s:%d", filepath.Base(p), n+1), c.args, sets))
			}
		}
	}
	return out
}

// Every engine command the README and the guides show names a verb the
// binary has and only flags that verb takes, so a renamed or removed flag
// fails here, not for the reader; and every verb and flag they show is
// typed by a CLI script (testdata/script), the examples that can run on
// an embedded server among them, unless the block says why not (a 3-node
// cluster, TLS, a real model's key). The help's own examples are held to
// the first rule too.
func TestDocsExamplesMatchTheBinary(t *testing.T) {
	_, sets := verbFlagSets(context.Background())
	scripted := map[string]bool{} // "verb" and "verb --flag"
	for _, c := range scriptCommands(t, sets) {
		if !c.known {
			continue
		}
		scripted[c.verb] = true
		for _, f := range c.flags {
			scripted[c.verb+" --"+f] = true
		}
	}
	var docs []docCommand
	exempt := map[string]bool{}
	for _, b := range docBlocks(t) {
		for _, sc := range engineCommands(b.text) {
			c := parseCommand(fmt.Sprintf("%s:%d", b.file, b.line+sc.line), sc.args, sets)
			docs = append(docs, c)
			exempt[c.where] = b.exempt
		}
	}
	for _, v := range append(verbs(), subVerbs()...) {
		for _, sc := range engineCommands(v.example) {
			docs = append(docs, parseCommand("the help of engine "+v.name, sc.args, sets))
		}
	}
	if len(docs) < 30 {
		t.Fatalf("found %d engine commands in the docs, want the guides' (at least 30): is the walk broken?", len(docs))
	}
	for _, c := range docs {
		if !c.known {
			t.Errorf("%s: engine %s: no such verb", c.where, c.verb)
			continue
		}
		fs := sets[c.verb]
		for _, f := range c.flags {
			if f == "h" || f == "help" {
				continue
			}
			if fs.Lookup(f) == nil {
				t.Errorf("%s: engine %s has no flag --%s", c.where, c.verb, f)
			}
		}
		if exempt[c.where] || strings.HasPrefix(c.where, "the help") {
			continue
		}
		if !scripted[c.verb] {
			t.Errorf("%s: engine %s: no CLI script types it", c.where, c.verb)
		}
		for _, f := range c.flags {
			if fs.Lookup(f) != nil && !scripted[c.verb+" --"+f] {
				t.Errorf("%s: engine %s --%s: no CLI script types it (add it to the page's script, or mark the block %s why -->)", c.where, c.verb, f, exemptMark)
			}
		}
	}
}

// subVerbs are subDocs as verbs (their examples).
func subVerbs() []verb {
	var out []verb
	for _, d := range subDocs() {
		out = append(out, verb{verbDoc: d})
	}
	return slices.Clip(out)
}
