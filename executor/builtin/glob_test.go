package builtin_test

import (
	"os"
	"path/filepath"
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
