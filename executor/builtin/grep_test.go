package builtin_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestGrep(t *testing.T) {
	tool, err := builtin.Grep()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	files := map[string]string{
		"main.go":        "package main\n// TODO: one\nfunc main() {}\n",
		"lib/util.go":    "package lib\n// TODO: two\n",
		"lib/notes.txt":  "TODO: three\n",
		"build/out.go":   "// TODO: generated\n",
		"vendor/x/y.go":  "// TODO: vendored\n",
		"keep/vendor.go": "// TODO: kept\n",
		".gitignore":     "build/\n/vendor\n*.log\n!keep.log\n",
		"debug.log":      "TODO: log\n",
		"keep.log":       "TODO: kept log\n",
		".git/config":    "TODO: git internals\n",
		"bin.dat":        "TODO\x00binary\n",
		"lib/.gitignore": "notes.txt\n{a,b}.go\n",
		"lib/{a,b}.go":   "// TODO: literal braces\n",
		"lib/a.go":       "// TODO: a\n",
	}
	writeTree(t, loc, files)
	run := func(in builtin.GrepInput) string { t.Helper(); return runText(t, tool, loc, in) }
	tests := []struct {
		why  string
		in   builtin.GrepInput
		want string
	}{
		{".gitignore honoured (nested, anchored, negated, directories), .git and binaries skipped",
			builtin.GrepInput{Pattern: "TODO"},
			"keep/vendor.go:1: // TODO: kept\nkeep.log:1: TODO: kept log\nlib/a.go:1: // TODO: a\nlib/util.go:2: // TODO: two\nmain.go:2: // TODO: one"},
		{"include glob", builtin.GrepInput{Pattern: "TODO", Include: "**/*.go"}, "keep/vendor.go:1: // TODO: kept\nlib/a.go:1: // TODO: a\nlib/util.go:2: // TODO: two\nmain.go:2: // TODO: one"},
		{"under a path", builtin.GrepInput{Pattern: "^package", Path: "lib"}, "lib/util.go:1: package lib"},
		{"a limit", builtin.GrepInput{Pattern: "TODO", Limit: 1}, "keep/vendor.go:1: // TODO: kept\n(4 more matches not shown: narrow the pattern or raise limit)"},
		{"nothing", builtin.GrepInput{Pattern: "FIXME"}, "No matches found"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, run(tt.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, diff)
		}
	}
	if _, err := prepare(t, tool, loc, builtin.GrepInput{Pattern: "("}); err == nil {
		t.Error("an invalid expression was accepted")
	}
	for _, include := range []string{"[a-", "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"} {
		if _, err := prepare(t, tool, loc, builtin.GrepInput{Pattern: "x", Include: include}); err == nil {
			t.Errorf("include %q was accepted", include)
		}
	}
}
