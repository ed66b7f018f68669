package sandbox

import (
	"errors"

	"golang.org/x/sys/unix"
)

// mark is what a policy path was in a pooled helper's view when it built
// it: whether it exists, is the root of a mount (the view's bind or
// cover), and which file it is.
type mark struct {
	path      string
	errno     unix.Errno // why statx failed; 0 when it did not
	mountRoot bool
	mode      uint16 // the file type bits
	dev, ino  uint64
}

// markView records the policy's paths as the view shows them: the
// location, the writable roots, the read-only and the denied paths.
func markView(p Policy) []mark {
	var ms []mark
	for _, list := range [][]string{{p.Location}, p.Writable, p.ReadOnly, p.Denied} {
		for _, q := range list {
			ms = append(ms, markOf(q))
		}
	}
	return ms
}

func markOf(path string) mark {
	m := mark{path: path}
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_INO, &st)
	if err != nil {
		if !errors.As(err, &m.errno) {
			m.errno = unix.EIO
		}
		return m
	}
	m.mountRoot = st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
	m.mode = st.Mode & unix.S_IFMT
	m.dev = unix.Mkdev(st.Dev_major, st.Dev_minor)
	m.ino = st.Ino
	return m
}

// changed names the first policy path whose view is no longer what the
// helper built: created, removed or replaced on the host since (a bind or
// cover of the view goes with a mount point the host removes or renames
// over, as git does to .git/config), so the view would no longer be the
// one a new helper builds; "" when none changed.
func (sv *server) changed() string {
	for _, m := range sv.marks {
		if markOf(m.path) != m {
			return m.path + " changed on the host"
		}
	}
	return ""
}
