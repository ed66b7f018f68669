//go:build linux

package sandbox_test

import (
	"errors"
	"strconv"
	"strings"
)

func errAs(err error, target any) bool { return errors.As(err, target) }

// hit reports whether the host's listener name was reached.
func hit(name string) func(w *world, out string) bool {
	return func(w *world, out string) bool { return w.hits[name].Load() > 0 }
}

// escapes is the suite: each attack of issue 25's list, and a few more.
func escapes() []escape {
	a := func(args ...string) func(w *world) []string {
		return func(w *world) []string { return append([]string{w.attack}, args...) }
	}
	_ = a
	return []escape{
		{name: "write-etc", root: true,
			argv:    func(w *world) []string { return []string{w.attack, "write", w.etc} },
			worked:  func(w *world, _ string) bool { return fileHas(w.etc, "pwned") },
			refused: "read-only file system"},
		{name: "write-etc-bash", root: true,
			argv:    func(w *world) []string { return sh("echo pwned > " + w.etc) },
			worked:  func(w *world, _ string) bool { return fileHas(w.etc, "pwned") },
			refused: "Read-only file system"},
		{name: "write-var-tmp",
			argv: func(w *world) []string {
				return sh("f=/var/tmp/stepgate-escape-$$; echo pwned > $f && echo ok && rm $f")
			},
			refused: "Read-only file system"},
		{name: "write-dev-shm",
			argv:    func(w *world) []string { return []string{w.attack, "write", w.shm} },
			worked:  func(w *world, _ string) bool { return fileHas(w.shm, "pwned") },
			refused: "ok"}, // the sandbox's /dev/shm is its own: the write works there, the host never sees it
		{name: "write-home",
			argv:    func(w *world) []string { return []string{w.attack, "write", w.home + "/.bash_logout"} },
			worked:  func(w *world, _ string) bool { return fileHas(w.home+"/.bash_logout", "pwned") },
			refused: "read-only file system"},
		{name: "write-data-dir",
			argv:    func(w *world) []string { return []string{w.attack, "write", w.data + "/engine.db"} },
			worked:  func(w *world, _ string) bool { return fileHas(w.data+"/engine.db", "pwned") },
			refused: "read-only file system"},
		{name: "read-ssh-key",
			argv:    func(w *world) []string { return sh("cat $HOME/.ssh/id_*") },
			worked:  func(w *world, out string) bool { return strings.Contains(out, "PRIVATE KEY") },
			refused: "No such file or directory"},
		{name: "read-data-dir",
			argv:    func(w *world) []string { return []string{w.attack, "read", w.data + "/engine.db"} },
			refused: "no such file or directory"},
		{name: "read-proc-environ-outside", // a process outside holds the engine's credentials
			argv: func(w *world) []string {
				return []string{w.attack, "read", "/proc/" + strconv.Itoa(w.sleeper.Process.Pid) + "/environ"}
			},
			worked:  func(w *world, out string) bool { return strings.Contains(out, "s3cret-nats") },
			refused: "no such file or directory"},
		{name: "proc-root-outside",
			argv: func(w *world) []string {
				return []string{w.attack, "write", "/proc/" + strconv.Itoa(w.sleeper.Process.Pid) + "/root" + w.target}
			},
			worked:  func(w *world, _ string) bool { return fileHas(w.target, "pwned") },
			refused: "no such file or directory"},
		{name: "symlink-out",
			argv:    func(w *world) []string { return []string{w.attack, "symlink", w.target, w.loc + "/link"} },
			worked:  func(w *world, _ string) bool { return fileHas(w.target, "pwned") },
			refused: "read-only file system"},
		{name: "hardlink-out",
			argv:    func(w *world) []string { return []string{w.attack, "hardlink", w.target, w.loc + "/link"} },
			worked:  func(w *world, _ string) bool { return fileHas(w.target, "pwned") },
			refused: "invalid cross-device link"},
		{name: "git-hook",
			argv:    func(w *world) []string { return []string{w.attack, "write", w.loc + "/.git/hooks/pre-commit"} },
			worked:  func(w *world, _ string) bool { return fileHas(w.loc+"/.git/hooks/pre-commit", "pwned") },
			refused: "read-only file system"},
		{name: "git-config",
			argv:    func(w *world) []string { return sh("echo '[core] pager = pwned' >> .git/config") },
			worked:  func(w *world, _ string) bool { return fileHas(w.loc+"/.git/config", "pwned") },
			refused: "Read-only file system"},
		{name: "shell-startup-file",
			argv:    func(w *world) []string { return sh("echo pwned >> .bashrc") },
			worked:  func(w *world, _ string) bool { return fileHas(w.loc+"/.bashrc", "pwned") },
			refused: "Read-only file system"},
		{name: "stepgate-project-file",
			argv:    func(w *world) []string { return []string{w.attack, "write", w.loc + "/.stepgate/config.yaml"} },
			worked:  func(w *world, _ string) bool { return fileHas(w.loc+"/.stepgate/config.yaml", "pwned") },
			refused: "read-only file system"},
		{name: "mount", root: true,
			argv:    func(w *world) []string { return []string{w.attack, "mount", w.loc} },
			refused: "mount: operation not permitted"},
		{name: "fsopen", root: true, argv: a("fsopen"), refused: "fsopen: operation not permitted"},
		{name: "unshare-r", argv: func(w *world) []string { return sh("unshare -r true && echo ok") },
			refused: "unshare failed: Operation not permitted"},
		{name: "clone-newuser", argv: a("clone-newuser"), refused: "operation not permitted"},
		{name: "chroot", root: true, argv: a("chroot", "/"), refused: "chroot: operation not permitted"},
		{name: "setns", root: true, argv: a("setns", "/proc/self/ns/net"), refused: "setns: operation not permitted"},
		{name: "ptrace-outside",
			argv:    func(w *world) []string { return []string{w.attack, "ptrace", strconv.Itoa(w.sleeper.Process.Pid)} },
			refused: "ptrace: operation not permitted"},
		{name: "kill-outside",
			argv:    func(w *world) []string { return []string{w.attack, "kill", strconv.Itoa(w.sleeper.Process.Pid)} },
			refused: "kill: no such process"},
		{name: "tcp-loopback", argv: func(w *world) []string { return []string{w.attack, "dial", "tcp", w.dial["tcp"]} },
			worked: hit("tcp"), refused: "socket: operation not permitted"},
		{name: "tcp-nats-port", argv: func(w *world) []string { return []string{w.attack, "dial", "tcp", w.dial["nats"]} },
			worked: hit("nats"), refused: "socket: operation not permitted"},
		{name: "tcp-ipv6", argv: func(w *world) []string { return []string{w.attack, "dial", "tcp6", w.dial["tcp6"]} },
			worked: hit("tcp6"), refused: "socket: operation not permitted"},
		{name: "udp", argv: func(w *world) []string { return []string{w.attack, "dial", "udp", w.dial["udp"]} },
			worked:  func(w *world, out string) bool { return strings.HasPrefix(out, "ok") },
			refused: "socket: operation not permitted"},
		{name: "icmp-ping", root: true, argv: a("ping"), refused: "socket: operation not permitted"},
		{name: "bash-dev-tcp",
			argv: func(w *world) []string {
				host, port, _ := strings.Cut(w.dial["tcp"], ":")
				return sh("exec 3<>/dev/tcp/" + host + "/" + port + " && echo hi >&3 && cat <&3")
			},
			worked: hit("tcp"), refused: "Operation not permitted"},
		{name: "abstract-unix", argv: func(w *world) []string { return []string{w.attack, "dial", "unix", w.dial["abstract"]} },
			worked: hit("abstract"), refused: "connection refused"},
		{name: "named-unix-tmp", argv: func(w *world) []string { return []string{w.attack, "dial", "unix", w.dial["unix-tmp"]} },
			worked: hit("unix-tmp"), refused: "no such file or directory"}, // not in the view: /tmp is private
		{name: "named-unix-denied", argv: func(w *world) []string { return []string{w.attack, "dial", "unix", w.dial["unix-denied"]} },
			worked: hit("unix-denied"), refused: "no such file or directory"},
		{name: "io_uring", argv: a("io_uring"), refused: "io_uring_setup: operation not permitted"},
		{name: "tiocsti", argv: a("tiocsti", "echo pwned\n"),
			worked:  func(w *world, _ string) bool { return strings.Contains(w.injected(), "pwned") },
			refused: "ioctl(TIOCSTI): operation not permitted"},
		{name: "fork-bomb", argv: a("fork", "400"), refused: "fork refused after"},
		{name: "file-10g", argv: func(w *world) []string { return []string{w.attack, "bigfile", w.loc + "/big"} },
			refused: "file too large"},
		{name: "file-10g-bash", argv: func(w *world) []string { return sh("truncate -s 10G big && echo ok") },
			refused: "File size limit exceeded"},
		{name: "credentials-env", argv: a("env"),
			worked: func(w *world, out string) bool {
				return strings.Contains(out, "NATS_PASSWORD=") || strings.Contains(out, "OPENAI_API_KEY=") ||
					strings.Contains(out, "GITHUB_TOKEN=") || strings.Contains(out, "STEPGATE_") || strings.Contains(out, "NATS_URL=")
			},
			refused: "TMPDIR=/tmp"},
		{name: "keyctl", argv: a("keyctl"), refused: "add_key: operation not permitted"},
		{name: "bpf", root: true, argv: a("bpf"), refused: "bpf: operation not permitted"},
		{name: "perf_event_open", argv: a("perf"), refused: "perf_event_open: operation not permitted"},
	}
}
