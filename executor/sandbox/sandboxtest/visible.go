// Package sandboxtest helps tests place files where a sandboxed process
// sees them.
package sandboxtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hidden are the directories a sandbox replaces with private ones of its
// own: a file under them on the host is not there for a sandboxed process.
var hidden = []string{"/tmp", "/dev/shm"}

// VisibleDir is a fresh directory, removed when the test ends, that a
// sandboxed process sees read-only (outside its location and writable
// roots): under the working directory, or when that lies under /tmp (a
// checkout there) under the user's cache or home directory. A test that
// finds none skips and says why.
func VisibleDir(t testing.TB, pattern string) string {
	t.Helper()
	var tried []string
	for _, base := range candidates() {
		if base == "" {
			continue
		}
		real, err := filepath.EvalSymlinks(base)
		if err != nil || isHidden(real) {
			tried = append(tried, base)
			continue
		}
		dir, err := os.MkdirTemp(real, pattern)
		if err != nil {
			tried = append(tried, base)
			continue
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		return dir
	}
	t.Skipf("no writable directory outside %s for a sandboxed process to see (tried %s)",
		strings.Join(hidden, " and "), strings.Join(tried, ", "))
	return ""
}

func candidates() []string {
	wd, _ := os.Getwd()
	cache, _ := os.UserCacheDir()
	home, _ := os.UserHomeDir()
	return []string{wd, cache, home}
}

func isHidden(path string) bool {
	for _, h := range hidden {
		if path == h || strings.HasPrefix(path, h+"/") {
			return true
		}
	}
	return false
}
