package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

type pathIn struct {
	Path string `json:"path"`
}

// whereTool resolves its path when its requests are computed and again
// when it runs, through Call.Resolve, and says where the path led.
func whereTool(t testing.TB) *executor.Tool {
	t.Helper()
	tool, err := executor.New("where", "d", func(_ context.Context, c executor.Call, in pathIn) (string, error) {
		p, err := c.Resolve(in.Path, true)
		if err != nil {
			return "", err
		}
		return p.Real, nil
	}, executor.WithRequests(func(c executor.Call, in pathIn) ([]descriptor.Request, error) {
		p, err := c.Resolve(in.Path, true)
		if err != nil {
			return nil, err
		}
		return append(p.Requests(), descriptor.Request{Action: "where", Resources: []string{p.Resource()}}), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// swapForSymlink replaces the directory dir by a symlink to target.
func swapForSymlink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".was"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// A call acts only where its paths led when it was decided: a directory
// replaced by a symlink after the decision — outside the location (the
// external_directory a human approved) or inside it — refuses the call
// when it runs, whether it runs from the same Prepare (an allowed call) or
// is prepared again from the recorded paths (an approval, on any host). A
// call decided before paths were recorded is not checked.
func TestCallResolveHoldsToTheDecision(t *testing.T) {
	tool := whereTool(t)
	tests := []struct {
		why    string
		path   func(loc, ext string) string
		swapIn func(loc, ext string) (dir, target string)
	}{
		{"an approved external directory", func(_, ext string) string { return filepath.Join(ext, "d") },
			func(loc, ext string) (string, string) {
				return filepath.Join(ext, "d"), filepath.Join(ext, "elsewhere")
			}},
		{"a directory inside the location", func(string, string) string { return "sub/x" },
			func(loc, _ string) (string, string) { return filepath.Join(loc, "sub"), filepath.Join(loc, "other") }},
	}
	for _, tt := range tests {
		for _, mode := range []string{"same prepare", "prepared again", "decided before paths were recorded"} {
			base := t.TempDir()
			loc, ext := filepath.Join(base, "ws"), filepath.Join(base, "ext")
			for _, d := range []string{filepath.Join(loc, "sub/x"), filepath.Join(loc, "other/x"), filepath.Join(ext, "d"), filepath.Join(ext, "elsewhere")} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			path := tt.path(loc, ext)
			args, _ := json.Marshal(pathIn{Path: path})
			first, err := tool.Prepare(executor.Call{Location: loc}, args)
			if err != nil {
				t.Fatal(err)
			}
			before := first.Run(context.Background()).Text()
			if diff := cmp.Diff([]executor.ResolvedPath{{Path: path, Real: before}}, first.Paths()); diff != "" {
				t.Errorf("%s: recorded paths (-want +got):\n%s", tt.why, diff)
			}
			dir, target := tt.swapIn(loc, ext)
			swapForSymlink(t, dir, target)
			run := first
			switch mode {
			case "prepared again":
				if run, err = tool.Prepare(executor.Call{Location: loc, Paths: first.Paths()}, args); err != nil {
					t.Fatalf("%s: preparing an approved call again refused it: %v", tt.why, err)
				}
			case "decided before paths were recorded":
				if run, err = tool.Prepare(executor.Call{Location: loc}, args); err != nil {
					t.Fatal(err)
				}
			}
			res := run.Run(context.Background())
			if mode == "decided before paths were recorded" {
				if res.IsError || res.Text() == before {
					t.Errorf("%s, %s: %q (error %v), want the path resolved afresh, unchecked", tt.why, mode, res.Text(), res.IsError)
				}
				continue
			}
			want := executor.ErrorResult("Path changed after permission approval: " + path)
			if diff := cmp.Diff(want, res); diff != "" {
				t.Errorf("%s, %s (-want +got):\n%s", tt.why, mode, diff)
			}
		}
	}
}

// The refusal wraps ErrPathChanged, so a caller can tell it apart.
func TestPathChangedIsErrPathChanged(t *testing.T) {
	base := t.TempDir()
	loc := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(loc, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(loc, "other"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := executor.Call{Location: loc, Paths: []executor.ResolvedPath{{Path: "sub/f", Real: filepath.Join(loc, "sub/f")}}}
	if _, err := c.Resolve("sub/f", false); err != nil {
		t.Fatalf("an unchanged path: %v", err)
	}
	swapForSymlink(t, filepath.Join(loc, "sub"), "other")
	if _, err := c.Resolve("sub/f", false); !errors.Is(err, executor.ErrPathChanged) {
		t.Errorf("a swapped path: %v, want ErrPathChanged", err)
	}
	if _, err := c.Resolve("other/f", false); err != nil {
		t.Errorf("a path that was not recorded is not checked: %v", err)
	}
}

// FuzzCallResolve holds Call.Resolve to the decision for any path: a path
// resolved while the call is prepared is recorded with the real path
// Resolve gave, a call handed those paths back resolves it again the same
// while nothing changed, and one handed another real path for it refuses
// with ErrPathChanged.
func FuzzCallResolve(f *testing.F) {
	for _, s := range []string{"notes.txt", "dir", "out", "chain1", "in", "dir/up/in", "/etc", "new/file", "./dir/../notes.txt", "."} {
		f.Add(s, true)
	}
	loc, _ := workspace(f)
	tool := whereTool(f)
	f.Fuzz(func(t *testing.T, path string, _ bool) {
		args, err := json.Marshal(pathIn{Path: path})
		if err != nil {
			return
		}
		var in pathIn // the path as the tool reads it (invalid UTF-8 replaced)
		if err := json.Unmarshal(args, &in); err != nil {
			t.Fatal(err)
		}
		path = in.Path
		first, err := tool.Prepare(executor.Call{Location: loc}, args)
		if err != nil {
			return // refused: nothing to hold
		}
		want, err := executor.Resolve(loc, path, true)
		if err != nil {
			t.Fatalf("%q prepared but does not resolve: %v", path, err)
		}
		if diff := cmp.Diff([]executor.ResolvedPath{{Path: path, Real: want.Real}}, first.Paths()); diff != "" {
			t.Fatalf("%q recorded (-want +got):\n%s", path, diff)
		}
		again := executor.Call{Location: loc, Paths: first.Paths()}
		if _, err := again.Resolve(path, true); err != nil {
			t.Fatalf("%q, unchanged, refused: %v", path, err)
		}
		moved := executor.Call{Location: loc, Paths: []executor.ResolvedPath{{Path: path, Real: want.Real + "-elsewhere"}}}
		if _, err := moved.Resolve(path, true); !errors.Is(err, executor.ErrPathChanged) {
			t.Fatalf("%q, recorded elsewhere: %v, want ErrPathChanged", path, err)
		}
	})
}
