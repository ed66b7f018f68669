package builtin

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stepgate/stepgate/executor"
)

// A write that fails after every section was verified — here because a
// regular file appeared where a directory is to be created, or a directory
// where a file is to be removed, between the plan and the writes — stops the
// patch, and the result says what was already applied and what was not
// attempted.
func TestApplyPatchReportsAWriteThatFailsAfterVerification(t *testing.T) {
	tests := []struct {
		why   string
		patch string
		want  string
		after map[string]string // "" for absent
		in    string            // what appears in the way: "sub" as a file, or "a.txt" as a directory
	}{
		{"the second section's write fails",
			"*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Add File: sub/b.txt\n+b\n*** Add File: c.txt\n+c\n*** Delete File: d.txt\n*** End Patch",
			"Add sub/b.txt failed: not a directory\nAlready applied (left in place): updated a.txt\nNot attempted: c.txt, d.txt",
			map[string]string{"a.txt": "A\n", "c.txt": "", "d.txt": "d\n"}, "sub"},
		{"the first section's write fails",
			"*** Begin Patch\n*** Add File: sub/b.txt\n+b\n*** Update File: a.txt\n-a\n+A\n*** End Patch",
			"Add sub/b.txt failed: not a directory\nNo file was changed.\nNot attempted: a.txt",
			map[string]string{"a.txt": "a\n"}, "sub"},
		{"a move's destination cannot be written: the source stays",
			"*** Begin Patch\n*** Update File: a.txt\n*** Move to: sub/a.txt\n-a\n+A\n*** End Patch",
			"Move a.txt to sub/a.txt failed: not a directory\nNo file was changed.",
			map[string]string{"a.txt": "a\n"}, "sub"},
		{"a move's source cannot be removed: the destination is reported",
			"*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n-a\n+A\n*** Delete File: d.txt\n*** End Patch",
			"Move a.txt to b.txt failed: b.txt was written, but a.txt could not be removed: directory not empty\nAlready applied (left in place): wrote b.txt\nNot attempted: d.txt",
			map[string]string{"b.txt": "A\n", "a.txt/x": "x", "d.txt": "d\n"}, "a.txt"},
	}
	for _, tt := range tests {
		loc := t.TempDir()
		for name, body := range map[string]string{"a.txt": "a\n", "d.txt": "d\n"} {
			if err := os.WriteFile(filepath.Join(loc, name), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ops, err := parsePatch(tt.patch)
		if err != nil {
			t.Fatal(err)
		}
		paths := make([][2]executor.Path, len(ops))
		for i, op := range ops {
			for j, path := range op.paths() {
				if paths[i][j], err = executor.Resolve(loc, path, false); err != nil {
					t.Fatal(err)
				}
			}
		}
		steps, err := planPatch(ops, paths)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		if tt.in == "sub" {
			if err := os.WriteFile(filepath.Join(loc, "sub"), []byte("in the way"), 0o600); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Remove(filepath.Join(loc, tt.in)); err != nil {
			t.Fatal(err)
		} else {
			writeFileAt(t, filepath.Join(loc, tt.in, "x"), "x")
		}
		out, err := commitPatch(steps)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %q, %v; want the error %q", tt.why, out, err, tt.want)
		}
		for name, want := range tt.after {
			b, err := os.ReadFile(filepath.Join(loc, name))
			if want == "" && err == nil {
				t.Errorf("%s: %s was written: %q", tt.why, name, b)
			} else if want != "" && string(b) != want {
				t.Errorf("%s: %s holds %q (%v), want %q", tt.why, name, b, err, want)
			}
		}
	}
}

func writeFileAt(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
