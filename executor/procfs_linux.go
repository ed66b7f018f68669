package executor

import "syscall"

// procSuperMagic is the proc file system's type (linux/magic.h).
const procSuperMagic = 0x9fa0

// onProcFS reports whether dir is on a proc file system, wherever mounted:
// its symlinks (self, cwd, root, fd/N) are a process's view.
func onProcFS(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == procSuperMagic
}
