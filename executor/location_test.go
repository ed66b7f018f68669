package executor_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// workspace makes a location with a file, a directory, and symlinks that
// lead in, out, through a chain, and to /; and a directory outside it.
func workspace(t testing.TB) (loc, outside string) {
	t.Helper()
	base := t.TempDir()
	loc, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{loc, outside, filepath.Join(loc, "dir")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(loc, "notes.txt"), filepath.Join(outside, "secret")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in":      "notes.txt",
		"out":     filepath.Join(outside, "secret"),
		"outdir":  outside,
		"chain1":  "chain2",
		"chain2":  "out",
		"root":    "/",
		"dir/up":  "..",
		"dir/esc": "../../outside",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(loc, name)); err != nil {
			t.Fatal(err)
		}
	}
	return loc, outside
}

func TestResolveRefusesEveryEscape(t *testing.T) {
	loc, _ := workspace(t)
	tests := []struct {
		why  string
		path string
		want error
	}{
		{"..", "..", executor.ErrRelativeEscape},
		{"../x", "../x", executor.ErrRelativeEscape},
		{"./../x", "./../x", executor.ErrRelativeEscape},
		{"down and further up", "dir/../../x", executor.ErrRelativeEscape},
		{"a symlink to a file outside", "out", executor.ErrLocationEscape},
		{"a symlink chain that ends outside", "chain1", executor.ErrLocationEscape},
		{"a symlink to /", "root", executor.ErrLocationEscape},
		{"below a symlink to /", "root/etc/passwd", executor.ErrLocationEscape},
		{"through a symlinked directory outside", "outdir/secret", executor.ErrLocationEscape},
		{"a relative symlink climbing out", "dir/esc/secret", executor.ErrLocationEscape},
		{"an absolute path inside that leads out", filepath.Join(loc, "out"), executor.ErrLocationEscape},
		{"below a regular file", "notes.txt/x", executor.ErrNonDirectoryAncestor},
		{"NUL", "notes\x00.txt", executor.ErrBadPath},
		{"a newline", "notes\n.txt", executor.ErrBadPath},
		{"empty", "", executor.ErrBadPath},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			p, err := executor.Resolve(loc, tt.path, false)
			if !errors.Is(err, tt.want) {
				t.Errorf("Resolve(%q) = %+v, %v; want %v", tt.path, p, err, tt.want)
			}
		})
	}
	long := strings.Repeat("a/", 3000) + "x"
	if p, err := executor.Resolve(loc, long, false); err == nil && !strings.HasPrefix(p.Real, p.Root) {
		t.Errorf("a very long path resolved outside: %+v", p)
	}
}

func TestResolveInside(t *testing.T) {
	loc, _ := workspace(t)
	real, _ := filepath.EvalSymlinks(loc)
	tests := []struct {
		why, path, resource string
	}{
		{"a file", "notes.txt", "notes.txt"},
		{"the root", ".", "."},
		{"a symlink inside names its target", "in", "notes.txt"},
		{"a climb that stays inside", "dir/up/notes.txt", "notes.txt"},
		{"a file that does not exist yet", "dir/new/file.go", "dir/new/file.go"},
		{"an absolute path inside", filepath.Join(loc, "dir"), "dir"},
	}
	for _, tt := range tests {
		p, err := executor.Resolve(loc, tt.path, false)
		if err != nil || p.External || p.Resource() != tt.resource || p.Root != real || p.Requests() != nil {
			t.Errorf("%s: Resolve(%q) = %+v, %v; want resource %q inside", tt.why, tt.path, p, err, tt.resource)
		}
	}
}

func TestResolveExternal(t *testing.T) {
	loc, outside := workspace(t)
	outsideReal, _ := filepath.EvalSymlinks(outside)
	tests := []struct {
		why     string
		path    string
		wantDir bool
		dir     string
	}{
		{"a file outside: its parent", filepath.Join(outside, "secret"), false, outsideReal},
		{"a directory, asked for as one: itself", outside, true, outsideReal},
		{"a directory, not asked for as one: its parent", outside, false, filepath.Dir(outsideReal)},
		{"a file that does not exist yet: its parent", filepath.Join(outside, "new.txt"), false, outsideReal},
	}
	for _, tt := range tests {
		p, err := executor.Resolve(loc, tt.path, tt.wantDir)
		if err != nil || !p.External || p.Dir != tt.dir {
			t.Errorf("%s: Resolve(%q) = %+v, %v; want external, dir %s", tt.why, tt.path, p, err, tt.dir)
			continue
		}
		pattern := filepath.ToSlash(tt.dir) + "/*"
		want := []descriptor.Request{{Action: "external_directory", Resources: []string{pattern}, Save: []string{pattern}}}
		if diff := cmp.Diff(want, p.Requests()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tt.why, diff)
		}
	}
}

// Whatever path comes in, Resolve does not panic, and what it accepts as
// inside is inside the location's real path.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"notes.txt", "..", "../x", "out", "chain1", "root/etc", "dir/up/in", "/etc/passwd", "a\x00b", "dir/esc/secret", "./././notes.txt", "//x"} {
		f.Add(s, false)
	}
	loc, _ := workspace(f)
	f.Fuzz(func(t *testing.T, path string, wantDir bool) {
		p, err := executor.Resolve(loc, path, wantDir)
		if filepath.IsAbs(path) && executor.IsProcessPath(filepath.Clean(path)) && !errors.Is(err, executor.ErrProcessPath) && !errors.Is(err, executor.ErrBadPath) {
			t.Fatalf("Resolve(%q) = %v, want %v", path, err, executor.ErrProcessPath)
		}
		if err != nil {
			return
		}
		if executor.IsProcessPath(p.Real) {
			t.Fatalf("Resolve(%q) accepted %s, a process path", path, p.Real)
		}
		if p.External {
			if !filepath.IsAbs(path) {
				t.Fatalf("relative %q resolved as external", path)
			}
			return
		}
		if rel, err := filepath.Rel(p.Root, p.Real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			t.Fatalf("Resolve(%q) accepted %s outside %s", path, p.Real, p.Root)
		}
	})
}

// BenchmarkResolve resolves a path four directories deep in the location
// (the process-path walk included).
func BenchmarkResolve(b *testing.B) {
	loc := b.TempDir()
	if err := os.MkdirAll(filepath.Join(loc, "a", "b", "c", "d"), 0o700); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := executor.Resolve(loc, "a/b/c/d/f.txt", false); err != nil {
			b.Fatal(err)
		}
	}
}
