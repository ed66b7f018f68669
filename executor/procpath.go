package executor

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Process paths: /proc (the directory of every process's view of the
// system: /proc/self/cwd, /proc/<pid>/root, /proc/thread-self/fd/N, …),
// /dev/fd and the standard streams' names (/dev/stdin, /dev/stdout,
// /dev/stderr, links into /proc/self/fd). What such a path names depends on
// the process that opens it: the engine resolving /proc/self/cwd/x finds
// its own working directory, the bash command it runs its own, so a
// decision on the engine's reading would name the wrong file. Resolve
// refuses them (ErrProcessPath), written so or reached through a symlink,
// and bash asks with the whole text for a redirection to one
// (executor/builtin); /dev/null and, there, the standard streams are
// untouched.

// maxProcessHops bounds the symlinks processPathThrough follows (the kernel's
// own bound is 40): a longer chain is left to realPath, which fails on it.
const maxProcessHops = 255

// IsProcessPath reports whether p, a clean absolute path, is a process
// path lexically: /proc or below it, /dev/fd or below it, or one of
// /dev/stdin, /dev/stdout and /dev/stderr.
func IsProcessPath(p string) bool {
	switch p {
	case "/proc", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/dev/fd/")
}

// processPathThrough reports whether abs, a clean absolute path, is or
// leads through a process path: lexically, or by a symlink of its existing
// part whose target is one, or one in a proc file system mounted elsewhere.
// It follows symlinks as the kernel does, component by component (a ".."
// after a symlink climbs from the link's target).
func processPathThrough(abs string) bool {
	if IsProcessPath(abs) {
		return true
	}
	done := "/"
	rest := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		if IsProcessPath(next) {
			return true
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return false // the rest does not exist (or cannot be looked at): nothing to follow
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if onProcFS(done) {
			return true
		}
		if hops++; hops > maxProcessHops {
			return false
		}
		target, err := os.Readlink(next)
		if err != nil {
			return false
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return false
}
