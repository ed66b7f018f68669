package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The helper's scratch paths while it builds the view: a tmpfs over /tmp
// becomes the root for a moment, the host's root is under oldRoot and the
// view is built under newRoot, then becomes the root.
const (
	scratch   = "/tmp"
	oldRoot   = "/oldroot"
	newRoot   = "/newroot"
	emptyFile = "/empty"
	// ProxyPath is where the host-side proxy's socket is bound in the
	// sandbox (NetProxy).
	ProxyPath = "/dev/stepgate-proxy.sock"
	// minPidMax is the least pid_max the kernel takes (RESERVED_PIDS+1).
	minPidMax = 301
)

// buildView makes the sandbox's filesystem and makes it the root: the
// host's root read-only (recursively, nosuid), the writable roots
// read-write, the read-only paths bound read-only again, the denied paths
// hidden, a private /tmp, a fresh /proc of the PID namespace, a minimal
// /dev. Run by stage 1, root of its user namespace.
func buildView(s spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return fmt.Errorf("scratch tmpfs: %w", err)
	}
	for _, d := range []string{oldRoot, newRoot} {
		if err := os.Mkdir(scratch+d, 0o700); err != nil {
			return err
		}
	}
	if err := unix.PivotRoot(scratch, scratch+oldRoot); err != nil {
		return fmt.Errorf("pivot_root to the scratch tmpfs: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := os.WriteFile(emptyFile, nil, 0); err != nil {
		return err
	}
	if err := bind(oldRoot, newRoot, true); err != nil {
		return err
	}
	if err := setAttr(newRoot, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
		return fmt.Errorf("root read-only: %w", err)
	}
	if err := unix.Mount("tmpfs", newRoot+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("private /tmp: %w", err)
	}
	if err := buildDev(); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	if err := unix.Mount("proc", newRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("/proc of the PID namespace: %w", err)
	}
	// The PID namespace's own pid_max bounds its tasks at once whatever
	// the uid (RLIMIT_NPROC does not bind a command of the host's root).
	pidMax := max(s.Policy.Limits.withDefaults().Procs, minPidMax)
	if err := os.WriteFile(newRoot+"/proc/sys/kernel/pid_max", []byte(strconv.FormatUint(pidMax, 10)), 0); err != nil {
		return fmt.Errorf("pid_max of the PID namespace: %w", err)
	}
	if err := setAttr(newRoot+"/proc", unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC); err != nil {
		return fmt.Errorf("/proc read-only: %w", err)
	}
	p := s.Policy
	if p.Mode == WorkspaceWrite {
		for _, w := range append([]string{p.Location}, p.Writable...) {
			if err := bindIn(w, false); err != nil {
				return fmt.Errorf("writable root %s: %w", w, err)
			}
		}
	} else if err := bindIn(p.Location, true); err != nil {
		return fmt.Errorf("location %s: %w", p.Location, err)
	}
	for _, r := range p.ReadOnly {
		if err := bindIn(r, true); err != nil {
			return fmt.Errorf("read-only path %s: %w", r, err)
		}
	}
	for _, d := range p.Denied {
		if err := hide(d); err != nil {
			return fmt.Errorf("denied path %s: %w", d, err)
		}
	}
	if p.network() == NetProxy {
		if err := os.WriteFile(newRoot+ProxyPath, nil, 0o600); err != nil {
			return err
		}
		if err := bind(oldRoot+p.ProxySocket, newRoot+ProxyPath, false); err != nil {
			return fmt.Errorf("proxy socket: %w", err)
		}
	}
	if s.Fault == "mount" {
		return errors.New("mount: refused (test fault)")
	}
	if err := os.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root to the view: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	return os.Chdir("/")
}

// bindIn binds the host's path into the view at the same place, making
// its mount point in the view's tmpfs (/tmp) when it is not there; a path
// the host does not have is skipped.
func bindIn(path string, readOnly bool) error {
	st, err := os.Lstat(oldRoot + path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := mountPoint(newRoot+path, st.IsDir()); err != nil {
		return err
	}
	if err := bind(oldRoot+path, newRoot+path, true); err != nil {
		return err
	}
	if readOnly {
		return setAttr(newRoot+path, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID)
	}
	return nil
}

// hide covers a denied path of the view: an empty read-only tmpfs over a
// directory, an empty unreadable file over a file.
func hide(path string) error {
	st, err := os.Stat(newRoot + path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // not in the view
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		return unix.Mount("tmpfs", newRoot+path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755")
	}
	if err := bind(emptyFile, newRoot+path, false); err != nil {
		return err
	}
	return setAttr(newRoot+path, unix.MOUNT_ATTR_RDONLY)
}

// mountPoint makes sure path exists in the view, a directory or a file.
func mountPoint(path string, dir bool) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, nil, 0o600)
}

func bind(from, to string, recursive bool) error {
	flags := uintptr(unix.MS_BIND)
	if recursive {
		flags |= unix.MS_REC
	}
	if err := unix.Mount(from, to, "", flags, ""); err != nil {
		return fmt.Errorf("bind %s: %w", to, err)
	}
	return nil
}

// setAttr sets mount attributes on path's mount and every mount under it.
func setAttr(path string, attr uint64) error {
	return unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW,
		&unix.MountAttr{Attr_set: attr})
}

// buildDev makes a minimal /dev: null, zero, full, random, urandom and
// tty bound from the host, a new devpts instance, a private shm, the fd
// links.
func buildDev() error {
	dev := newRoot + "/dev"
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return err
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if err := os.WriteFile(dev+"/"+name, nil, 0o600); err != nil {
			return err
		}
		if err := bind(oldRoot+"/dev/"+name, dev+"/"+name, false); err != nil {
			return err
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(dev+"/"+d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("devpts: %w", err)
	}
	if err := unix.Mount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("shm: %w", err)
	}
	links := map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return err
		}
	}
	return nil
}
