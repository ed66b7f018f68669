package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func prepare(t *testing.T, tool *executor.Tool, loc string, in any) (*executor.Prepared, error) {
	t.Helper()
	args, _ := json.Marshal(in)
	return tool.Prepare(executor.Call{Location: loc}, args)
}

func TestWrite(t *testing.T) {
	tool, err := builtin.Write()
	if err != nil {
		t.Fatal(err)
	}
	loc, outside := t.TempDir(), t.TempDir()
	run := func(in builtin.WriteInput) executor.Result {
		t.Helper()
		p, err := prepare(t, tool, loc, in)
		if err != nil {
			t.Fatal(err)
		}
		return p.Run(context.Background())
	}
	if got := run(builtin.WriteInput{Path: "a/b/new.txt", Content: "hi"}).Text(); got != "Created a/b/new.txt (2 bytes)" {
		t.Errorf("create: %q", got)
	}
	if got := run(builtin.WriteInput{Path: "a/b/new.txt", Content: "again"}).Text(); got != "Overwrote a/b/new.txt (5 bytes)" {
		t.Errorf("overwrite: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(loc, "a/b/new.txt")); string(b) != "again" {
		t.Errorf("file holds %q", b)
	}
	if res := run(builtin.WriteInput{Path: "a", Content: "x"}); !res.IsError {
		t.Errorf("writing over a directory: %+v", res)
	}
	// Permissions: edit on the path; outside, external_directory first.
	p, err := prepare(t, tool, loc, builtin.WriteInput{Path: filepath.Join(outside, "f.txt"), Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	outReal, _ := filepath.EvalSymlinks(outside)
	pattern := filepath.ToSlash(outReal) + "/*"
	want := []descriptor.Request{{Action: "external_directory", Resources: []string{pattern}, Save: []string{pattern}},
		{Action: "edit", Resources: []string{filepath.ToSlash(filepath.Join(outReal, "f.txt"))}, Save: []string{"*"}}}
	if diff := cmp.Diff(want, p.Requests()); diff != "" {
		t.Errorf("requests outside (-want +got):\n%s", diff)
	}
	if _, err := prepare(t, tool, loc, builtin.WriteInput{Path: "../escape.txt", Content: "x"}); err == nil {
		t.Error("../escape.txt was accepted")
	}
	// A symlink swapped in after the decision cannot lead the write out.
	p, err = prepare(t, tool, loc, builtin.WriteInput{Path: "late.txt", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "stolen"), filepath.Join(loc, "late.txt")); err != nil {
		t.Fatal(err)
	}
	if res := p.Run(context.Background()); !res.IsError {
		t.Errorf("write through a symlink made after the check: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(outside, "stolen")); err == nil {
		t.Error("the write left the location")
	}
}

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
	run := func(in builtin.GlobInput) string {
		t.Helper()
		p, err := prepare(t, tool, loc, in)
		if err != nil {
			t.Fatal(err)
		}
		return p.Run(context.Background()).Text()
	}
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
