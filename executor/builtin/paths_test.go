package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// Every tool that touches a path acts only where the path led when the
// call was decided: a directory replaced by a symlink afterwards — here to
// another directory inside the location, which os.Root alone would allow —
// refuses the call with "Path changed after permission approval: <path>",
// and neither place is changed. apply_patch checks every file before it
// changes any.
func TestPathToolsRefuseAPathThatChanged(t *testing.T) {
	build := func(f func() (*executor.Tool, error)) *executor.Tool {
		t.Helper()
		tool, err := f()
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	patch := "*** Begin Patch\n*** Add File: new.txt\n+new\n*** Update File: sub/f.txt\n-approved\n+changed\n*** End Patch\n"
	tests := []struct {
		why  string
		tool *executor.Tool
		in   any
		path string // named in the refusal
		abs  bool   // named by its absolute path (bash resolves a redirect in its workdir)
	}{
		{"read", build(builtin.Read), builtin.ReadInput{Path: "sub/f.txt"}, "sub/f.txt", false},
		{"read_file", build(builtin.ReadFile), builtin.ReadFileInput{Path: "sub/f.txt"}, "sub/f.txt", false},
		{"write", build(builtin.Write), builtin.WriteInput{Path: "sub/f.txt", Content: "agent"}, "sub/f.txt", false},
		{"edit", build(builtin.Edit), builtin.EditInput{Path: "sub/f.txt", OldString: "approved", NewString: "agent"}, "sub/f.txt", false},
		{"apply_patch", build(builtin.ApplyPatch), builtin.ApplyPatchInput{PatchText: patch}, "sub/f.txt", false},
		{"glob", build(builtin.Glob), builtin.GlobInput{Pattern: "*", Path: "sub"}, "sub", false},
		{"grep", build(builtin.Grep), builtin.GrepInput{Pattern: ".", Path: "sub"}, "sub", false},
		{"bash redirect", build(builtin.Bash), builtin.BashInput{Command: "echo agent > sub/f.txt"}, "sub/f.txt", true},
	}
	for _, tt := range tests {
		loc := t.TempDir()
		writeTree(t, loc, map[string]string{"sub/f.txt": "approved\n", "other/f.txt": "other\n"})
		p, err := prepare(t, tt.tool, loc, tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(loc, "sub"), filepath.Join(loc, "sub.was")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("other", filepath.Join(loc, "sub")); err != nil {
			t.Fatal(err)
		}
		res := p.Run(context.Background())
		path := tt.path
		if tt.abs {
			real, err := filepath.EvalSymlinks(loc)
			if err != nil {
				t.Fatal(err)
			}
			path = filepath.Join(real, tt.path)
		}
		want := "Path changed after permission approval: " + path
		if tt.tool.Name() == "apply_patch" {
			want += "\nNo file was changed."
		}
		if diff := cmp.Diff(executor.ErrorResult(want), res); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, diff)
		}
		for name, body := range map[string]string{"sub.was/f.txt": "approved\n", "other/f.txt": "other\n"} {
			if b, err := os.ReadFile(filepath.Join(loc, name)); err != nil || string(b) != body {
				t.Errorf("%s: %s holds %q (%v), want %q", tt.why, name, b, err, body)
			}
		}
		if _, err := os.Stat(filepath.Join(loc, "new.txt")); err == nil {
			t.Errorf("%s: a file was added", tt.why)
		}
	}
}

// realSlash is dir's real path in '/' form: the Root the executor sets on
// requests for paths inside a location at dir.
func realSlash(t *testing.T, dir string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(real)
}
