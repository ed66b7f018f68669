package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// symlinkedWorkspace makes a location whose symlinks lead out (to a
// directory, to a file, from .gitignore), stay inside (to a directory, to a
// file), loop (to the location itself, to its parent directory, to each
// other); and the directory outside they lead to.
func symlinkedWorkspace(t testing.TB, base string) (loc, out string) {
	t.Helper()
	loc, out = filepath.Join(base, "ws"), filepath.Join(base, "out")
	files := map[string]string{
		"ws/sub/a.txt":     "inside secret\n",
		"out/secret.txt":   "outside secret\n",
		"out/deep/d.txt":   "outside secret\n",
		"out/ignore":       "sub/\n",
		"ext/own.txt":      "external secret\n",
		"out2/stray.txt":   "stray secret\n",
		"out2/deep/x.txt":  "stray secret\n",
		"ext/sub/mine.txt": "external secret\n",
	}
	for name, body := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"ws/lnk":        "../out",
		"ws/fout":       "../out/secret.txt",
		"ws/.gitignore": "../out/ignore",
		"ws/in":         "sub",
		"ws/fin":        "sub/a.txt",
		"ws/loop":       ".",
		"ws/sub/back":   "..",
		"ws/l1":         "l2",
		"ws/l2":         "l1",
		"ext/esc":       "../out2",
		"ext/fesc":      "../out2/stray.txt",
		"ext/sub/up":    "..",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	return loc, out
}

// bounded runs f, failing the test if it has not returned within 10s (a
// walk that loops through symlinks).
func bounded(t *testing.T, what string, f func() string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() { done <- f() }()
	select {
	case s := <-done:
		return s
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not end: a symlink loop?", what)
		return ""
	}
}

// sortedLines sorts a listing (glob orders by modification time).
func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// glob and grep walk without leaving the directory they search: a symlink
// to a directory outside is not entered and one to a file outside is not
// listed or read (nor a .gitignore that leads out); symlinks that stay
// inside lead where they point, unless they loop back to a directory the
// path went through (such paths are not walked, so every walk ends soon).
// Under an approved external
// directory the walk stays inside that directory likewise.
func TestSearchesStayInside(t *testing.T) {
	base := t.TempDir()
	loc, _ := symlinkedWorkspace(t, base)
	ext := filepath.Join(base, "ext")
	glob, err := builtin.Glob()
	if err != nil {
		t.Fatal(err)
	}
	grep, err := builtin.Grep()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		why  string
		tool *executor.Tool
		in   any
		want string
	}{
		{"glob through a symlink out", glob, builtin.GlobInput{Pattern: "lnk/**"}, "No files found"},
		{"glob of a symlink out's entries", glob, builtin.GlobInput{Pattern: "lnk/*"}, "No files found"},
		{"glob of everything: symlinks out and to directories are not files", glob, builtin.GlobInput{Pattern: "**/*"}, "fin\nsub/a.txt"},
		{"glob through a symlink inside", glob, builtin.GlobInput{Pattern: "in/*"}, "in/a.txt"},
		{"glob through a loop to the location", glob, builtin.GlobInput{Pattern: "loop/**"}, "No files found"},
		{"glob round a loop through a symlink inside", glob, builtin.GlobInput{Pattern: "in/back/sub/*"}, "No files found"},
		{"a pattern that would walk round the loops", glob, builtin.GlobInput{Pattern: strings.Repeat("*/", 40) + "a.txt"}, "No files found"},
		{"wildcards do not enter symlinked directories (as before)", glob, builtin.GlobInput{Pattern: "*/a.txt"}, "sub/a.txt"},
		{"glob through a loop of symlinks", glob, builtin.GlobInput{Pattern: "l1/**"}, "No files found"},
		{"glob naming the parent", glob, builtin.GlobInput{Pattern: "../out/*"}, "No files found"},
		{"glob under an approved external directory", glob, builtin.GlobInput{Pattern: "**", Path: ext},
			filepath.Join(ext, "own.txt") + "\n" + filepath.Join(ext, "sub/mine.txt")},
		{"glob out of an approved external directory", glob, builtin.GlobInput{Pattern: "esc/**", Path: ext}, "No files found"},
		{"grep of everything, its .gitignore leading out unread", grep, builtin.GrepInput{Pattern: "secret"}, "sub/a.txt:1: inside secret"},
		{"grep including a symlink out", grep, builtin.GrepInput{Pattern: "secret", Include: "lnk/**"}, "No matches found"},
		{"grep under a symlink inside", grep, builtin.GrepInput{Pattern: "secret", Path: "in"}, "sub/a.txt:1: inside secret"},
		{"grep of one file", grep, builtin.GrepInput{Pattern: "secret", Path: "sub/a.txt"}, "sub/a.txt:1: inside secret"},
		{"grep under an approved external directory", grep, builtin.GrepInput{Pattern: "secret", Path: ext},
			filepath.Join(ext, "own.txt") + ":1: external secret\n" + filepath.Join(ext, "sub/mine.txt") + ":1: external secret"},
	}
	for _, tt := range tests {
		got := bounded(t, tt.why, func() string { return runText(t, tt.tool, loc, tt.in) })
		if diff := cmp.Diff(tt.want, sortedLines(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, diff)
		}
	}
	// A search rooted at a symlink out is refused before it walks.
	for _, in := range []any{builtin.GlobInput{Pattern: "*", Path: "lnk"}, builtin.GrepInput{Pattern: "x", Path: "lnk"}} {
		if _, err := prepare(t, glob, loc, in); err == nil {
			t.Errorf("%+v: a search rooted at a symlink out was accepted", in)
		}
	}
}

// A search that is cancelled stops; one whose location is gone finds
// nothing rather than failing oddly.
func TestSearchOfAGoneDirectory(t *testing.T) {
	grep, err := builtin.Grep()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(loc, "gone"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := prepare(t, grep, loc, builtin.GrepInput{Pattern: "x", Path: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(loc, "gone")); err != nil {
		t.Fatal(err)
	}
	if got := p.Run(context.Background()).Text(); got != "No matches found" {
		t.Errorf("grep of a directory removed since the decision: %q", got)
	}
}

// FuzzSearchStaysInside runs glob with arbitrary patterns and grep with
// arbitrary include globs over a workspace full of symlinks that lead out
// and loop, searching the location or an approved external directory:
// every path either lists must resolve, symlinks followed, to a file inside
// the directory searched, and every search ends.
func FuzzSearchStaysInside(f *testing.F) {
	for _, seed := range []struct {
		pattern string
		ext     bool
	}{
		{"lnk/**", false}, {"**/*", false}, {"loop/**", false}, {"l1/**", false}, {"*/*", false},
		{"{lnk,in,fout}/*", false}, {"../out/*", false}, {"/etc/*", false}, {"**/../*", false},
		{"loop/loop/sub/back/lnk/*", false}, {"esc/**", true}, {"**", true}, {"sub/up/esc/*", true},
		{"*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*/*", false}, {"in/back/in/*", false}, {"sub/up/sub/up/*", true},
	} {
		f.Add(seed.pattern, seed.ext)
	}
	loc, _ := symlinkedWorkspace(f, f.TempDir())
	ext := filepath.Join(filepath.Dir(loc), "ext")
	glob, err := builtin.Glob()
	if err != nil {
		f.Fatal(err)
	}
	grep, err := builtin.Grep()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern string, external bool) {
		dir, path := loc, ""
		if external {
			dir, path = ext, ext
		}
		for _, search := range []struct {
			tool *executor.Tool
			in   any
		}{
			{glob, builtin.GlobInput{Pattern: pattern, Path: path, Limit: 1000}},
			{grep, builtin.GrepInput{Pattern: "secret", Include: pattern, Path: path, Limit: 1000}},
		} {
			p, err := search.tool.Prepare(executor.Call{Location: loc}, mustJSON(t, search.in))
			if err != nil {
				continue // an invalid pattern is refused before anything runs
			}
			out := bounded(t, pattern, func() string { return p.Run(context.Background()).Text() })
			for _, line := range strings.Split(out, "\n") {
				if line == "No files found" || line == "No matches found" || strings.HasPrefix(line, "(") {
					continue
				}
				if search.tool == grep {
					line, _, _ = strings.Cut(line, ":")
				}
				abs := line
				if !filepath.IsAbs(abs) {
					abs = filepath.Join(loc, abs)
				}
				real, err := filepath.EvalSymlinks(abs)
				if err != nil {
					t.Fatalf("%s %q listed %q, which does not resolve: %v", search.tool.Name(), pattern, line, err)
				}
				if rel, err := filepath.Rel(dir, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
					t.Fatalf("%s %q listed %q, which is %s: outside %s", search.tool.Name(), pattern, line, real, dir)
				}
				if fi, err := os.Stat(real); err != nil || fi.IsDir() {
					t.Fatalf("%s %q listed %q, which is not a file", search.tool.Name(), pattern, line)
				}
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
