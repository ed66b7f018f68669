package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestGlob(t *testing.T) {
	tool, err := builtin.Glob()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	now := time.Now()
	for i, f := range []string{"a.go", "dir/b.go", "dir/deep/c.go", "dir/x.txt"} {
		path := filepath.Join(loc, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		at := now.Add(time.Duration(i) * time.Minute) // later files are newer
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	run := func(in builtin.GlobInput) string { t.Helper(); return runText(t, tool, loc, in) }
	tests := []struct {
		why  string
		in   builtin.GlobInput
		want string
	}{
		{"** across directories, newest first", builtin.GlobInput{Pattern: "**/*.go"}, "dir/deep/c.go\ndir/b.go\na.go"},
		{"under a path, relative to the workspace", builtin.GlobInput{Pattern: "*.go", Path: "dir"}, "dir/b.go"},
		{"a limit", builtin.GlobInput{Pattern: "**/*", Limit: 2}, "dir/x.txt\ndir/deep/c.go\n(2 more not shown: narrow the pattern or raise limit)"},
		{"nothing", builtin.GlobInput{Pattern: "*.rs"}, "No files found"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, run(tt.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, diff)
		}
	}
	if _, err := prepare(t, tool, loc, builtin.GlobInput{Pattern: "[unclosed"}); err == nil {
		t.Error("an invalid pattern was accepted")
	}
}

// glob searches a directory: a path naming a file is an error (before any
// permission is asked, and again when the call runs), not "No files found".
func TestGlobPathNamingAFile(t *testing.T) {
	tool, err := builtin.Glob()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	writeTree(t, loc, map[string]string{"dir/a.go": "", "dir/b.go": ""})
	const want = "path dir/a.go is a file, not a directory: glob searches a directory (give the directory in path and the file name in pattern, or read the file)"
	for _, tc := range []struct {
		why, path, want string
	}{
		{"a file", "dir/a.go", want},
		{"a directory", "dir", "dir/a.go"},
		{"a missing directory", "gone", "No files found"},
	} {
		p, err := prepare(t, tool, loc, builtin.GlobInput{Pattern: "a.go", Path: tc.path})
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: refused with %v, want %q", tc.why, err, tc.want)
			}
			continue
		}
		if got := p.Run(context.Background()).Text(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.why, got, tc.want)
		}
	}
	// A directory when decided, a file when run.
	p, err := prepare(t, tool, loc, builtin.GlobInput{Pattern: "*", Path: "dir/c"})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, loc, map[string]string{"dir/c": "now a file"})
	if res := p.Run(context.Background()); !res.IsError || !strings.Contains(res.Text(), "path dir/c is a file") {
		t.Errorf("a file when run: %q (error %v)", res.Text(), res.IsError)
	}
}
