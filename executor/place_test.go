package executor_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/oklog/ulid/v2"

	"github.com/stepgate/stepgate/executor"
)

const placeID = "01M8P570G07KPDFAMNYVAD1MSJ"

func mark(t *testing.T, dir string) executor.Place {
	t.Helper()
	p, err := executor.MarkLocation(dir, "h1", func() string { return placeID })
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The first mark writes the marker once; a second reads it back, and the
// place is the same.
func TestMarkLocationOnce(t *testing.T) {
	dir := t.TempDir()
	p := mark(t, dir)
	if p.ID != placeID || p.DirIno == 0 || p.MarkIno == 0 || p.Host != "" {
		t.Fatalf("place %+v: want the id given, both inode numbers, no host", p)
	}
	again, err := executor.MarkLocation(dir, "h2", func() string { t.Fatal("a marked location asked for a new id"); return "" })
	if err != nil || again != p {
		t.Fatalf("second mark: %+v, %v; want %+v", again, err, p)
	}
	var ps executor.Places
	if err := ps.Check(dir, p, "h2"); err != nil {
		t.Errorf("the directory itself, from another host of the same volume: %v", err)
	}
}

// What is not the place is refused: another directory at the path (no
// marker), a copy with the marker (other inode numbers), a directory moved
// away and made again, a marker that names another id, and an unmarked
// place on any host but its own.
func TestPlaceRefusesAnotherDirectory(t *testing.T) {
	var ps executor.Places
	cases := map[string]func(t *testing.T, dir string, p executor.Place) (executor.Place, string){
		"moved away and made again": func(t *testing.T, dir string, p executor.Place) (executor.Place, string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			return p, "h1"
		},
		"a copy, marker and all": func(t *testing.T, dir string, p executor.Place) (executor.Place, string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-a", dir+".old", dir).CombinedOutput(); err != nil {
				t.Fatalf("cp -a: %v: %s", err, out)
			}
			return p, "h1"
		},
		"a marker with another id": func(t *testing.T, dir string, p executor.Place) (executor.Place, string) {
			p.ID = "01M8P572EGW1YJBDGX9ANMBET7"
			return p, "h1"
		},
		"an unmarked place on another host": func(t *testing.T, dir string, p executor.Place) (executor.Place, string) {
			p.MarkIno, p.Host = 0, "h1"
			return p, "h2"
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := mark(t, dir)
			if err := ps.Check(dir, p, "h1"); err != nil {
				t.Fatalf("before: %v", err)
			}
			p, host := change(t, dir, p)
			if err := ps.Check(dir, p, host); !errors.Is(err, executor.ErrNotPlace) {
				t.Fatalf("after: %v, want ErrNotPlace", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "w")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := mark(t, dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := ps.Check(dir, p, "h1"); !errors.Is(err, executor.ErrNotPlace) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a directory gone: %v, want ErrNotPlace and not-exist", err)
		}
	})
}

// A marker that is not one of ours is refused, never taken for a place: a
// named pipe (not waited on), a symbolic link, and content that is not a
// version-1 marker with a ULID.
func TestMarkLocationRefusesWhatIsNotAMarker(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"a named pipe":    func(path string) error { return exec.Command("mkfifo", path).Run() },
		"a symbolic link": func(path string) error { return os.Symlink("/etc/hostname", path) },
		"not JSON":        func(path string) error { return os.WriteFile(path, []byte("hello"), 0o644) },
		"another version": func(path string) error {
			return os.WriteFile(path, []byte(`{"v":2,"id":"`+placeID+`"}`), 0o644)
		},
		"an id that is not a ULID": func(path string) error {
			return os.WriteFile(path, []byte(`{"v":1,"id":"../../etc"}`), 0o644)
		},
		"an unknown field": func(path string) error {
			return os.WriteFile(path, []byte(`{"v":1,"id":"`+placeID+`","host":"x"}`), 0o644)
		},
		"too large": func(path string) error {
			return os.WriteFile(path, []byte(`{"v":1,"id":"`+placeID+`"}`+strings.Repeat(" ", 600)), 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, ".stepgate"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := plant(filepath.Join(dir, executor.MarkerPath)); err != nil {
				t.Fatal(err)
			}
			if p, err := executor.MarkLocation(dir, "h1", func() string { return placeID }); err == nil {
				t.Fatalf("marked as %+v", p)
			}
		})
	}
}

// A .stepgate that is a symbolic link out of the location does not lead
// the marker out of it.
func TestMarkLocationStaysInside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, ".stepgate")); err != nil {
		t.Fatal(err)
	}
	if _, err := executor.MarkLocation(dir, "h1", func() string { return placeID }); err == nil {
		t.Error("marked through a link out of the location")
	}
	if _, err := os.Stat(filepath.Join(outside, "location")); err == nil {
		t.Error("a marker was written outside the location")
	}
}

// A directory the engine may not write is placed without a marker, for
// its host alone.
func TestMarkLocationReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes a read-only directory: this needs an unprivileged user")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	p := mark(t, dir)
	if p.MarkIno != 0 || p.Host != "h1" {
		t.Fatalf("place %+v: want no marker, host h1", p)
	}
	var ps executor.Places
	if err := ps.Check(dir, p, "h1"); err != nil {
		t.Errorf("its own host: %v", err)
	}
	if err := ps.Check(dir, p, "h2"); !errors.Is(err, executor.ErrNotPlace) {
		t.Errorf("another host: %v, want ErrNotPlace", err)
	}
}

// Starts that mark one location at once agree on one place: none of them
// reads a marker half written.
func TestMarkLocationConcurrently(t *testing.T) {
	for trial := range 20 {
		dir := t.TempDir()
		const n = 8
		places, errs := make([]executor.Place, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				places[i], errs[i] = executor.MarkLocation(dir, "h1", func() string { return ulid.Make().String() })
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || places[i] != places[0] {
				t.Fatalf("trial %d: start %d: %+v, %v; start 0: %+v", trial, i, places[i], errs[i], places[0])
			}
		}
		left, _ := os.ReadDir(filepath.Join(dir, ".stepgate"))
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != ".gitignore location" {
			t.Fatalf("trial %d: .stepgate holds %q, want the marker and its .gitignore alone", trial, names)
		}
	}
}

// Attempts of one start (a request sent again while the first copy runs)
// mark with one id at once, and agree.
func TestMarkLocationOneIDTwice(t *testing.T) {
	for trial := range 20 {
		dir := t.TempDir()
		const n = 8
		places, errs := make([]executor.Place, n), make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { places[i], errs[i] = executor.MarkLocation(dir, "h1", func() string { return placeID }) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || places[i] != places[0] {
				t.Fatalf("trial %d: attempt %d: %+v, %v; attempt 0: %+v", trial, i, places[i], errs[i], places[0])
			}
		}
	}
}

// Marking a git work tree leaves `git status` clean: the marker is the
// directory's, not the project's, and a .stepgate/ it made says so in a
// .gitignore of its own. A .stepgate/ the project had is left as it was.
func TestMarkLocationStaysOutOfGitStatus(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: apt-get install -y git")
	}
	status := func(dir string) string {
		t.Helper()
		out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
		if err != nil {
			t.Fatalf("git status: %v\n%s", err, out)
		}
		return string(out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	mark(t, dir)
	if s := status(dir); s != "" {
		t.Errorf("git status after marking the location: %q, want nothing", s)
	}

	tracked := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", tracked).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(tracked, ".stepgate", "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	mark(t, tracked)
	if _, err := os.Stat(filepath.Join(tracked, ".stepgate", ".gitignore")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("marking wrote a .gitignore into the project's own .stepgate/: %v", err)
	}
}
