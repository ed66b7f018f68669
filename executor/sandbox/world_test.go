//go:build linux

package sandbox_test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
	"golang.org/x/sys/unix"
)

// world is one attack's surroundings, all in the test's temporary
// directories: a location (a git work tree with hooks and config), an
// outside directory and a fake home (visible read-only, as a real home is
// under the read-only root), the engine's data directory in it (denied),
// the listeners of the host the attack tries to reach, a process outside
// to signal or trace, a terminal.
type world struct {
	loc, out, home, data, bin, attack string
	target                            string // a file outside the location
	etc, shm                          string // unique names under /etc and /dev/shm
	dial                              map[string]string
	hits                              map[string]*atomic.Int32
	sleeper                           *exec.Cmd
	ptyMaster, ptySlave               *os.File
}

// attackBinary copies the test binary, the attack program, where the
// sandbox can see it (bound read-only): go test's is under the host's
// /tmp, which the sandbox replaces, in a directory an unprivileged user
// may not even search; /proc/self/exe opens it all the same.
func attackBinary(t *testing.T) string {
	in, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(t.TempDir(), attackName)
	o, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(o, in); err != nil {
		t.Fatal(err)
	}
	must(t, o.Close())
	return dst
}

func newWorld(t *testing.T, attackBin string) *world {
	root := t.TempDir()
	w := &world{loc: filepath.Join(root, "loc"), out: filepath.Join(root, "out"), home: filepath.Join(root, "home"),
		bin: filepath.Dir(attackBin), attack: attackBin, dial: map[string]string{}, hits: map[string]*atomic.Int32{}}
	w.data = filepath.Join(w.home, ".local/share/stepgate")
	w.target = filepath.Join(w.out, "target")
	w.etc = "/etc/stepgate-escape-" + randomName()
	for _, d := range []string{w.loc + "/.git/hooks", w.loc + "/.stepgate", w.out, w.home + "/.ssh", w.data} {
		must(t, os.MkdirAll(d, 0o755))
	}
	files := map[string]string{w.loc + "/.git/config": "[core]\n", w.loc + "/.bashrc": "", w.target: "original\n",
		w.home + "/.ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n", w.data + "/engine.db": "data\n"}
	for p, c := range files {
		must(t, os.WriteFile(p, []byte(c), 0o644))
	}
	w.shm = "/dev/shm/stepgate-escape-" + randomName()
	t.Cleanup(func() { _ = os.Remove(w.etc); _ = os.Remove(w.shm) })
	w.listen(t, "tcp", "tcp", "127.0.0.1:0")
	w.listen(t, "nats", "tcp", "127.0.0.1:0")
	w.listen(t, "tcp6", "tcp6", "[::1]:0")
	w.listen(t, "abstract", "unix", "@stepgate-escape-"+randomName())
	w.listen(t, "unix-tmp", "unix", filepath.Join(t.TempDir(), "s.sock"))
	w.listen(t, "unix-visible", "unix", filepath.Join(w.out, "s.sock"))
	w.listen(t, "unix-denied", "unix", filepath.Join(w.data, "s.sock"))
	w.listenUDP(t)
	w.sleeper = exec.Command("sleep", "600")
	w.sleeper.Env = w.environ()
	must(t, w.sleeper.Start())
	t.Cleanup(func() { _ = w.sleeper.Process.Kill(); _ = w.sleeper.Wait() })
	w.openPty(t)
	return w
}

// policy is the profile under test: workspace-write, no network, the
// default read-only and denied paths, 350 tasks.
func (w *world) policy() sandbox.Policy {
	return sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: sandbox.NetOff, Location: w.loc,
		ReadOnly: append(sandbox.DefaultReadOnly(w.loc), w.out, w.home, w.bin),
		Denied:   append(sandbox.DefaultDenied(w.home), w.data),
		Limits:   sandbox.Limits{Procs: 350}}
}

// environ is the engine's environment: its own, HOME the fake home, and
// the credentials an engine holds.
func (w *world) environ() []string {
	return append(os.Environ(), "HOME="+w.home, "NATS_PASSWORD=s3cret-nats", "NATS_URL=nats://u:p@127.0.0.1:4222",
		"STEPGATE_SECRETS=/x/secrets", "OPENAI_API_KEY=sk-escape", "GITHUB_TOKEN=ghp_escape", "DB_PASSWORD_FILE=/x")
}

func (w *world) listen(t *testing.T, name, network, addr string) {
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { l.Close() })
	hits := new(atomic.Int32)
	w.dial[name], w.hits[name] = l.Addr().String(), hits
	if network == "unix" && strings.HasPrefix(addr, "@") {
		w.dial[name] = addr
	}
	greeting := "hello\n"
	if name == "nats" {
		greeting = "INFO {\"server_id\":\"escape\",\"version\":\"2.15.2\"}\r\n"
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			_, _ = bufio.NewReader(c).ReadString('\n')
			_, _ = c.Write([]byte(greeting))
			c.Close()
		}
	}()
}

func (w *world) listenUDP(t *testing.T) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { c.Close() })
	hits := new(atomic.Int32)
	w.dial["udp"], w.hits["udp"] = c.LocalAddr().String(), hits
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			hits.Add(1)
		}
	}()
}

// openPty opens a terminal pair; the slave is the command's stdin.
func (w *world) openPty(t *testing.T) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	must(t, unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	must(t, err)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	must(t, err)
	t.Cleanup(func() { m.Close(); s.Close() })
	w.ptyMaster, w.ptySlave = m, s
}

// injected is what waits in the terminal's input, read without waiting.
func (w *world) injected() string {
	fd := int(w.ptySlave.Fd())
	_ = unix.SetNonblock(fd, true)
	buf := make([]byte, 256)
	n, _ := unix.Read(fd, buf)
	return string(buf[:max(n, 0)])
}

func randomName() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fileHas(path, s string) bool {
	b, err := os.ReadFile(path)
	return err == nil && strings.Contains(string(b), s)
}
