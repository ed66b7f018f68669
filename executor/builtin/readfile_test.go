package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// workspace lays out, under one temp dir:
//
//	ws/notes.txt           "hello\n"
//	ws/sub/deep.txt        "deep"
//	ws/empty.txt           ""
//	ws/bin.dat             bytes that are not UTF-8
//	ws/link-in -> sub/deep.txt
//	ws/link-out -> ../outside/secret.txt
//	ws/dir-out -> ../outside
//	outside/secret.txt     "secret"
func workspace(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws = filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(ws, "notes.txt"):       "hello\n",
		filepath.Join(ws, "sub", "deep.txt"): "deep",
		filepath.Join(ws, "empty.txt"):       "",
		filepath.Join(ws, "bin.dat"):         "\xff\xfe\x00\x01",
		filepath.Join(outside, "secret.txt"): "secret",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link-in":  filepath.Join("sub", "deep.txt"),
		"link-out": filepath.Join("..", "outside", "secret.txt"),
		"dir-out":  filepath.Join("..", "outside"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside
}

func TestReadFile(t *testing.T) {
	ws, outside := workspace(t)
	tool, err := builtin.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	call := executor.Call{Run: "r", Location: ws}
	wsReal, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		why        string
		path       string
		wantErr    error  // a refusal at Prepare, before any permission is asked
		wantRes    string // the resource of the `read` request
		wantText   string
		wantFailed bool // Run returns an error result with wantText
	}{
		{why: "a file at the root", path: "notes.txt", wantRes: "notes.txt", wantText: "hello\n"},
		{why: "a nested file, / separators", path: "sub/deep.txt", wantRes: "sub/deep.txt", wantText: "deep"},
		{why: "an absolute path inside the location", path: filepath.Join(ws, "sub", "deep.txt"), wantRes: "sub/deep.txt", wantText: "deep"},
		{why: "a .. that stays inside", path: "sub/../notes.txt", wantRes: "notes.txt", wantText: "hello\n"},
		{why: "a symlink inside is asked for as its real path", path: "link-in", wantRes: "sub/deep.txt", wantText: "deep"},
		{why: "an empty file", path: "empty.txt", wantRes: "empty.txt", wantText: executor.EmptyOutput},
		{why: "../x leaves the location", path: "../outside/secret.txt", wantErr: builtin.ErrRelativeEscape},
		{why: "a bare ..", path: "..", wantErr: builtin.ErrRelativeEscape},
		{why: "an absolute path outside", path: filepath.Join(outside, "secret.txt"), wantErr: builtin.ErrExternalPath},
		{why: "/etc/passwd", path: "/etc/passwd", wantErr: builtin.ErrExternalPath},
		{why: "a symlink to a file outside", path: "link-out", wantErr: builtin.ErrLocationEscape},
		{why: "a path through a symlinked directory outside", path: "dir-out/secret.txt", wantErr: builtin.ErrLocationEscape},
		{why: "below a regular file", path: "notes.txt/x", wantErr: builtin.ErrNonDirectoryAncestor},
		{why: "a missing file is asked for, then not found", path: "sub/missing.txt", wantRes: "sub/missing.txt",
			wantText: "file not found: sub/missing.txt", wantFailed: true},
		{why: "a directory", path: "sub", wantRes: "sub", wantText: "sub is a directory, not a file", wantFailed: true},
		{why: "a binary file", path: "bin.dat", wantRes: "bin.dat", wantText: "Cannot read binary file: bin.dat", wantFailed: true},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"path": tt.path})
		p, err := tool.Prepare(call, args)
		if tt.wantErr != nil {
			var ie *executor.InputError
			if !errors.Is(err, tt.wantErr) || !errors.As(err, &ie) {
				t.Errorf("%s: Prepare(%s) = %v, want an InputError wrapping %v", tt.why, tt.path, err, tt.wantErr)
			} else if !strings.HasPrefix(err.Error(), "Invalid tool input: "+tt.wantErr.Error()+": ") {
				t.Errorf("%s: error text %q", tt.why, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Prepare(%s) = %v", tt.why, tt.path, err)
			continue
		}
		// Root: the gate also matches the path's absolute form.
		wantReqs := []descriptor.Request{{Action: "read", Resources: []string{tt.wantRes}, Save: []string{"*"}, Root: filepath.ToSlash(wsReal)}}
		if diff := cmp.Diff(wantReqs, p.Requests()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tt.why, diff)
		}
		want := executor.TextResult(tt.wantText)
		if tt.wantFailed {
			want = executor.ErrorResult(tt.wantText)
		}
		if diff := cmp.Diff(want, p.Run(context.Background())); diff != "" {
			t.Errorf("%s: result (-want +got):\n%s", tt.why, diff)
		}
	}
}

// TestReadFileRechecksAtRun: a file swapped for a symlink to the outside after the
// permission was asked (a human may take hours) is still refused.
func TestReadFileRechecksAtRun(t *testing.T) {
	ws, outside := workspace(t)
	tool, err := builtin.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	p, err := tool.Prepare(executor.Call{Location: ws}, json.RawMessage(`{"path":"notes.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "notes.txt")
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), target); err != nil {
		t.Fatal(err)
	}
	want := executor.ErrorResult(`location_escape: path "notes.txt" resolves outside the location through a symlink`)
	if diff := cmp.Diff(want, p.Run(context.Background())); diff != "" {
		t.Errorf("Run after the swap (-want +got):\n%s", diff)
	}
}

func TestReadFileLocation(t *testing.T) {
	tool, err := builtin.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"", "relative/dir", filepath.Join(t.TempDir(), "missing")} {
		_, err := tool.Prepare(executor.Call{Location: loc}, json.RawMessage(`{"path":"a.txt"}`))
		if !errors.Is(err, builtin.ErrNoLocation) {
			t.Errorf("location %q: Prepare = %v, want ErrNoLocation", loc, err)
		}
	}
}
