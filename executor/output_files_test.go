package executor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor"
)

// The store lists, removes and tells gone the files it spills to, and
// only those: tool_<id> regular files of its own directory.
func TestOutputStoreFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	s := newStore(t, dir)
	if files, err := s.Files(); err != nil || files != nil {
		t.Fatalf("a missing directory: %v, %v; want none", files, err)
	}
	_, sp := s.Bound(executor.TextResult(lines(10, "x")), executor.Limits{MaxLines: 5})
	if sp == nil || sp.Path != s.PathOf("ID1") {
		t.Fatalf("spilled to %+v, want %s", sp, s.PathOf("ID1"))
	}
	for _, name := range []string{"other", "tool_dir"} {
		if name == "tool_dir" {
			if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(sp.Path, filepath.Join(dir, "tool_link")); err != nil {
		t.Fatal(err)
	}
	files, err := s.Files()
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
		if f.Modified.IsZero() {
			t.Errorf("%s: no modification time", f.Path)
		}
	}
	if diff := cmp.Diff([]string{sp.Path}, paths); diff != "" {
		t.Fatalf("Files (-want +got):\n%s", diff)
	}
	if s.Gone(sp.Path) || s.Gone(filepath.Join(t.TempDir(), "tool_elsewhere")) {
		t.Fatal("Gone: a present file, or a file of another directory")
	}
	for range 2 { // the second time it is gone already
		if err := s.Remove(sp.Path); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Gone(sp.Path) {
		t.Fatal("a removed file is not gone")
	}
}
