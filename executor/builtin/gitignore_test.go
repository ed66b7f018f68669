package builtin

import (
	"path"
	"regexp"
	"strings"
	"testing"
)

// plainName is a file name with no glob or gitignore syntax in it.
var plainName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// FuzzIgnorer feeds arbitrary .gitignore text and paths to the matcher: it
// must never panic, and a trailing rule naming the file exactly must decide
// (ignore it, or with "!" keep it), because the last matching rule wins.
func FuzzIgnorer(f *testing.F) {
	f.Add("build/\n/vendor\n*.log\n!keep.log\n", "", "lib/keep.log", false)
	f.Add("# comment\n\n**/gen/**\n", "sub", "sub/a/gen/x.go", false)
	f.Add("[a-\n\\!x\n/\n!\n", "", "x", true)
	f.Add("a/**/b\n", "d", "d/a/x/y/b", true)
	f.Add("{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}{*,*}b\n", "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false)
	f.Add("\\{a,b}\n\\\\{x}\n", "", "{a,b}", false)
	f.Fuzz(func(t *testing.T, text, base, rel string, isDir bool) {
		var g ignorer
		g.parse(base, strings.NewReader(text))
		_ = g.ignored(rel, isDir)

		// The walk hands over clean relative paths only.
		if rel != path.Clean(rel) || path.IsAbs(rel) {
			return
		}
		name := path.Base(rel)
		if !plainName.MatchString(name) || name == "." || name == ".." || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "!") {
			return
		}
		if base != "" && !strings.HasPrefix(rel, base+"/") {
			return
		}
		g.parse(base, strings.NewReader("\n"+name+"\n"))
		if !g.ignored(rel, isDir) {
			t.Fatalf("rule %q last: %q not ignored", name, rel)
		}
		g.parse(base, strings.NewReader("\n!"+name+"\n"))
		if g.ignored(rel, isDir) {
			t.Fatalf("rule !%q last: %q still ignored", name, rel)
		}
	})
}
