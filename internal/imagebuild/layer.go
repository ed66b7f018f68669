package imagebuild

import (
	"archive/tar"
	"bytes"
	"fmt"
	"time"
)

// The image's user: not root, with no login, the number distroless images
// use for theirs.
const (
	uid      = 65532
	userName = "stepgate"
)

// rootfs is the image's one layer, as a tar: the binary at /engine (root's,
// not writable by the engine's user), /etc/passwd and /etc/group naming
// the user, /data (the volume, the user's), /tmp (the demo and the tools'
// temporary files) and /etc/stepgate (where the user's file is mounted:
// XDG_CONFIG_HOME is /etc). Every entry has the time mtime, so one binary
// makes one layer.
func rootfs(binary []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: owner, Gid: owner, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	steps := []func() error{
		func() error { return file("engine", 0o755, binary) },
		func() error { return dir("etc", 0o755, 0) },
		func() error {
			return file("etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:Stepgate:/data:/sbin/nologin\n", userName, uid, uid))
		},
		func() error {
			return file("etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\n%s:x:%d:\n", userName, uid))
		},
		func() error { return dir("etc/stepgate", 0o755, 0) },
		func() error { return dir("data", 0o700, uid) },
		func() error { return dir("tmp", 0o1777, 0) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("the image's layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("the image's layer: %w", err)
	}
	return buf.Bytes(), nil
}
