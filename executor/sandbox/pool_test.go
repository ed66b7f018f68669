//go:build linux

package sandbox_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/executor/sandbox/sandboxtest"
)

// engineName is arg0 under which the test binary is an engine that keeps
// a warm pooled helper (TestPoolEngineDeath).
const engineName = "sandbox-engine"

// poolRun runs argv on pl under p in dir and returns its output and error.
func poolRun(t *testing.T, pl *sandbox.Pool, p sandbox.Policy, argv []string, dir string, env []string) (string, error) {
	t.Helper()
	c, err := pl.Command(p, argv, dir, env)
	must(t, err)
	out, err := c.CombinedOutput()
	if !c.Sandboxed() || c.Enforced().LandlockABI < 1 || !c.Enforced().Seccomp {
		t.Fatalf("not sandboxed: %+v", c.Enforced())
	}
	return string(out), err
}

// writePool is a pool closed when the test ends, and a workspace-write
// policy (no network) on a fresh location; it skips where the host
// cannot sandbox.
func writePool(t *testing.T) (*sandbox.Pool, sandbox.Policy, string) {
	t.Helper()
	canSandbox(t)
	loc := t.TempDir()
	pl := sandbox.NewPool()
	t.Cleanup(func() { _ = pl.Close() })
	return pl, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: loc}, loc
}

// tagged is a sleep duration unique to the test, to find its processes.
func tagged() string {
	return "700." + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'f' {
			return '1'
		}
		return r
	}, randomName()[:6])
}

// TestPoolCallsShareNothing: two calls of one policy run on one helper
// (the same user namespace), yet the second finds nothing of the first:
// its background processes (one in another session) are gone once the
// first call's Wait returns, and its files in /tmp and /dev/shm are too
// (each call has a fresh private /tmp, as under a one-shot helper).
func TestPoolCallsShareNothing(t *testing.T) {
	pl, p, loc := writePool(t)
	tag := tagged()
	first := "readlink /proc/self/ns/user; echo a > /tmp/a; mkdir -p /tmp/d/e; echo b > /dev/shm/b; echo kept > kept; " +
		"sleep " + tag + " & setsid sleep " + tag + " & disown -a; exit 0"
	out1, err := poolRun(t, pl, p, sh(first), loc, os.Environ())
	must(t, err)
	if n := sandboxtest.Processes(tag); n != 0 {
		t.Fatalf("%d background processes of the first call outlived it", n)
	}
	out2, err := poolRun(t, pl, p, sh("readlink /proc/self/ns/user; ls -d /tmp/a /tmp/d /dev/shm/b; cat kept"), loc, os.Environ())
	must(t, err)
	ns1, _, _ := strings.Cut(out1, "\n")
	ns2, rest, _ := strings.Cut(out2, "\n")
	if ns1 != ns2 {
		t.Fatalf("the calls ran on two helpers (%s, %s): the test proves nothing", ns1, ns2)
	}
	want := "ls: cannot access '/tmp/a': No such file or directory\nls: cannot access '/tmp/d': No such file or directory\n" +
		"ls: cannot access '/dev/shm/b': No such file or directory\nkept\n"
	if rest != want {
		t.Fatalf("the second call found %q, want %q", rest, want)
	}
}

// TestPoolKillEndsTree: killing a pooled call (what the bash tool does on
// a timeout or a cancelled context) kills its process tree, in its
// session and out of it, before Wait returns; the helper serves the next
// call.
func TestPoolKillEndsTree(t *testing.T) {
	pl, p, loc := writePool(t)
	tag := tagged()
	c, err := pl.Command(p, sh("sleep "+tag+" & setsid sleep "+tag+" & echo started; wait"), loc, os.Environ())
	must(t, err)
	must(t, c.Start())
	deadline := time.Now().Add(time.Minute) // only to stop a hang
	for sandboxtest.Processes(tag) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if sandboxtest.Processes(tag) < 2 {
		t.Fatal("the sleeps did not start")
	}
	must(t, c.Kill())
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Wait did not return after Kill")
	}
	if exitStatus(err) != 128+int(syscall.SIGKILL) {
		t.Fatalf("killed call: %v, want exit %d", err, 128+int(syscall.SIGKILL))
	}
	if n := sandboxtest.Processes(tag); n != 0 {
		t.Fatalf("%d processes of the killed call survived it", n)
	}
	if out, err := poolRun(t, pl, p, sh("echo next"), loc, os.Environ()); err != nil || out != "next\n" {
		t.Fatalf("the next call: %v %q", err, out)
	}
}

// helpers are this process's children that are sandbox helpers.
func helpers(t *testing.T, parent int) []int {
	t.Helper()
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		st, err := os.ReadFile(d + "/stat")
		cmd, _ := os.ReadFile(d + "/cmdline")
		if err != nil || !bytes.HasPrefix(cmd, []byte("stepgate-sandbox\x00")) {
			continue
		}
		f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// gone waits until pid is no longer a live process (only to stop a hang).
func gone(pid int) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || bytes.Contains(st, []byte(") Z")) {
			return true
		}
	}
	return false
}

// TestPoolReplacesKilledHelper: a helper killed with SIGKILL between two
// calls is replaced, and the next call runs sandboxed (in another user
// namespace than the dead helper's and the engine's; a write outside the
// location refused).
func TestPoolReplacesKilledHelper(t *testing.T) {
	pl, p, loc := writePool(t)
	out1, err := poolRun(t, pl, p, sh("readlink /proc/self/ns/user"), loc, os.Environ())
	must(t, err)
	hs := helpers(t, os.Getpid())
	if len(hs) != 1 {
		t.Fatalf("helpers %v, want one", hs)
	}
	must(t, syscall.Kill(hs[0], syscall.SIGKILL))
	if !gone(hs[0]) {
		t.Fatal("the killed helper did not end")
	}
	out2, err := poolRun(t, pl, p, sh("readlink /proc/self/ns/user; echo x > /etc/stepgate-pool-"+randomName()), loc, os.Environ())
	own, _ := os.Readlink("/proc/self/ns/user")
	ns2, rest, _ := strings.Cut(out2, "\n")
	if ns2 == strings.TrimSpace(out1) || ns2 == own || !strings.Contains(rest, "Read-only file system") {
		t.Fatalf("after the helper died: %v %q (first call %q, engine %s)", err, out2, out1, own)
	}
	if hs2 := helpers(t, os.Getpid()); len(hs2) != 1 || hs2[0] == hs[0] {
		t.Fatalf("helpers %v after %v was killed", hs2, hs[0])
	}
}

// TestPoolViewFollowsHost: what the host changes between two calls on a
// policy path reaches the next call as a fresh one-shot helper would see
// it: .git/config replaced by a rename (as git writes it) stays
// read-only, a denied directory created meanwhile is hidden. (A bind of
// the view goes with a mount point the host renames over.)
func TestPoolViewFollowsHost(t *testing.T) {
	canSandbox(t)
	w := newWorld(t, attackBinary(t))
	p := w.policy()
	pl := sandbox.NewPool()
	defer pl.Close()
	_, err := poolRun(t, pl, p, sh("true"), w.loc, w.environ())
	must(t, err)
	must(t, os.WriteFile(w.loc+"/.git/config.lock", []byte("[core]\n"), 0o644))
	must(t, os.Rename(w.loc+"/.git/config.lock", w.loc+"/.git/config"))
	must(t, os.MkdirAll(w.home+"/.aws", 0o755))
	must(t, os.WriteFile(w.home+"/.aws/credentials", []byte("aws-secret\n"), 0o600))
	out, _ := poolRun(t, pl, p, sh("echo '[core] pager = pwned' >> .git/config; cat $HOME/.aws/credentials"), w.loc, w.environ())
	if fileHas(w.loc+"/.git/config", "pwned") || strings.Contains(out, "aws-secret") ||
		!strings.Contains(out, "Read-only file system") {
		t.Fatalf("the pooled view did not follow the host:\n%s", out)
	}
}

// TestPoolEngineDeath: an engine killed with SIGKILL leaves no helper: its
// warm helper ends with it (its control socket's end, and Pdeathsig).
func TestPoolEngineDeath(t *testing.T) {
	canSandbox(t)
	bin := filepath.Join(filepath.Dir(attackBinary(t)), engineName)
	must(t, os.Rename(filepath.Join(filepath.Dir(bin), attackName), bin))
	loc := t.TempDir()
	e := exec.Command(bin, loc)
	e.Stderr = os.Stderr
	stdout, err := e.StdoutPipe()
	must(t, err)
	must(t, e.Start())
	defer func() { _ = e.Process.Kill(); _ = e.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the engine: %v %q", err, line)
	}
	hs := helpers(t, e.Process.Pid)
	if len(hs) != 1 {
		t.Fatalf("the engine's helpers: %v, want one", hs)
	}
	must(t, e.Process.Kill())
	_ = e.Wait()
	if !gone(hs[0]) {
		t.Fatalf("helper %d outlived its engine", hs[0])
	}
}

// fakeEngine is the engine of TestPoolEngineDeath: it runs one call in
// the location args[0] on a pool, says ready, and waits to be killed.
func fakeEngine(args []string) int {
	pl := sandbox.NewPool()
	c, err := pl.Command(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: args[0]}, []string{"true"}, args[0], os.Environ())
	if err == nil {
		err = c.Run()
	}
	if err != nil {
		os.Stdout.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("ready\n")
	time.Sleep(time.Hour)
	return 0
}

// TestPoolParallelCalls: calls in flight at once on one helper (the
// parallel calls of one step) each get their own output and exit status;
// a call's end kills its own session only, not the other calls'.
func TestPoolParallelCalls(t *testing.T) {
	pl, p, loc := writePool(t)
	if _, err := poolRun(t, pl, p, sh("true"), loc, os.Environ()); err != nil {
		t.Fatal(err)
	}
	const n = 4
	// Each says it runs, then waits for the test's go: all are in flight
	// at once; then they end in any order.
	cmds := make([]*sandbox.Cmd, n)
	outs := make([]bytes.Buffer, n)
	for i := range cmds {
		script := "touch ran" + strconv.Itoa(i) + "; until test -e go; do sleep 0.01; done; echo out" + strconv.Itoa(i) +
			"; exit " + strconv.Itoa(10+i)
		c, err := pl.Command(p, sh(script), loc, os.Environ())
		must(t, err)
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		must(t, c.Start())
		cmds[i] = c
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(loc, "ran*")); len(m) == n {
			break
		}
	}
	if m, _ := filepath.Glob(filepath.Join(loc, "ran*")); len(m) != n {
		t.Fatalf("%d of %d calls started", len(m), n)
	}
	must(t, os.WriteFile(filepath.Join(loc, "go"), nil, 0o644))
	for i, c := range cmds {
		err := c.Wait()
		if exitStatus(err) != 10+i || outs[i].String() != "out"+strconv.Itoa(i)+"\n" {
			t.Errorf("call %d: %v %q", i, err, outs[i].String())
		}
	}
	if hs := helpers(t, os.Getpid()); len(hs) != 1 {
		t.Fatalf("helpers %v: the calls did not share one", hs)
	}
}
