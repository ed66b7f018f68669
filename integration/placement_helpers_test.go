package integration

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// nsInstall is what a machine without the namespace tools is told to run.
const nsInstall = "apt-get install -y util-linux mount"

// nsMount is the wrapper an `engine serve` of the placement tests runs in:
// in a mount namespace of its own ($1 the real directory, $2 the mount
// point, $3 the engine binary), it bind-mounts the directory at the mount
// point and becomes the engine.
const nsMount = `src=$1 mnt=$2 bin=$3; shift 3; mount --bind "$src" "$mnt" && exec "$bin" serve "$@"`

// needNamespaces fails the test, naming the install, where unshare or mount
// is missing, and skips it where this user may not make a mount namespace.
func needNamespaces(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"unshare", "mount"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("the placement tests give each engine host a mount namespace of its own, and there is no %s on PATH: %s", bin, nsInstall)
		}
	}
	if out, err := exec.Command("unshare", "-m", "--propagation", "private", "true").CombinedOutput(); err != nil {
		t.Skipf("this user may not make a mount namespace (the placement tests run as root): %v %s", err, out)
	}
}

// nsHost is an `engine serve` process in a mount namespace of its own, as a
// separate machine would be: it sees at the mount point only its own real
// directory (src), bind-mounted there, and the rest of the filesystem as
// the test does. The test reads and changes a host's workspaces through
// src; the host sees them at the mount point. Killed and started again, the
// host finds the same data, name and workspaces.
type nsHost struct {
	*server
	t         *testing.T
	name      string
	src, mnt  string
	data      string
	args      []string // serve's flags beyond --data and --host
	restarted int
}

// serveNS starts host name with its workspaces in src seen at mnt, and
// extra flags (--nats and the rest). It is stopped when the test ends.
func serveNS(t *testing.T, name, src, mnt string, extra ...string) *nsHost {
	t.Helper()
	h := &nsHost{t: t, name: name, src: src, mnt: mnt, data: t.TempDir(), args: extra}
	h.start()
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Signal(syscall.SIGTERM)
			_ = h.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("host %s (started %d times), last stderr:\n%s", h.name, h.restarted+1, tail(h.stderr.String(), 30))
		}
	})
	return h
}

// start starts the host's process and waits until it says it is serving.
// The process is the engine itself: the wrapper and unshare exec into it.
func (h *nsHost) start() {
	t := h.t
	t.Helper()
	args := append([]string{"-m", "--propagation", "private", "sh", "-c", nsMount, "sh", h.src, h.mnt, engineBin,
		"--data", h.data, "--host", h.name}, h.args...)
	s := &server{cmd: exec.Command("unshare", args...)}
	s.cmd.Stderr = &s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "stepgate serving") {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		t.Fatalf("host %s: engine serve did not start: %q %v\n%s", h.name, line, err, s.stderr.String())
	}
	h.server = s
}

// kill kills the host with SIGKILL and reaps it.
func (h *nsHost) kill() { h.kill9(h.t) }

// restart starts the killed host again on its data, name and workspaces.
func (h *nsHost) restart() {
	h.t.Helper()
	h.restarted++
	h.start()
}

// workspaces makes the real directories of the named hosts under one
// temporary directory, and the empty mount point at which each host sees
// its own: root is the mount point, src[name] the host's directory.
func workspaces(t *testing.T, names ...string) (root string, src map[string]string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "ws")
	src = map[string]string{}
	for _, d := range append([]string{root}, names...) {
		if d != root {
			src[d] = filepath.Join(base, "host-"+d)
			d = src[d]
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, src
}

// mkfiles makes files (path → content; a path ending in / is a
// directory) under dir.
func mkfiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, text := range files {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runLog reads a run's commits back from the stream.
type runLog struct {
	t   *testing.T
	log *step.Log
}

func newRunLog(t *testing.T, nc *nats.Conn) *runLog {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := step.Open(ctx, js, step.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return &runLog{t: t, log: l}
}

// result is a commit that records a call's result: the call, its step and
// the host that committed it.
type result struct {
	call, host string
	step       int
}

// results returns the run's commits that record a call's result, in log
// order, and the hosts of all its commits by kind.
func (r *runLog) results(run string) (res []result, kinds map[events.Kind][]string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stored, err := r.log.ReadRun(ctx, run, 0)
	if err != nil {
		r.t.Fatalf("read run %s: %v", run, err)
	}
	kinds = map[events.Kind][]string{}
	for _, s := range stored {
		if s.Commit == nil {
			r.t.Errorf("run %s: seq %d does not decode", run, s.Seq)
			continue
		}
		kinds[s.Commit.Kind] = append(kinds[s.Commit.Kind], s.Commit.Host)
		for _, e := range s.Commit.Events {
			if rec, ok := e.(events.ToolResultRecorded); ok {
				res = append(res, result{call: rec.CallID, host: s.Commit.Host, step: s.Commit.Step})
			}
		}
	}
	return res, kinds
}
