package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The hostile kinds of configuration file: a 600 MB file (sparse: no disk,
// no time to write), a named pipe nobody ever opens for writing, a symbolic
// link to /dev/zero, a directory.
var hostileKinds = []string{"a FIFO", "600 MB", "a link to /dev/zero", "a directory"}

// makeHostile makes path a hostile file of kind (one of hostileKinds).
func makeHostile(t *testing.T, kind, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "600 MB":
		var f *os.File
		if f, err = os.Create(path); err == nil {
			err = errors.Join(f.Truncate(600<<20), f.Close())
		}
	case "a FIFO":
		err = syscall.Mkfifo(path, 0o600)
	case "a link to /dev/zero":
		err = os.Symlink("/dev/zero", path)
	case "a directory":
		err = os.Mkdir(path, 0o755)
	default:
		t.Fatalf("no hostile file %q", kind)
	}
	if err != nil {
		t.Fatalf("make %s at %s: %v", kind, path, err)
	}
}

// projectFile is a location's .stepgate/config.yaml.
func projectFile(loc string) string { return filepath.Join(loc, ".stepgate", "config.yaml") }

// blockedOnFIFO reports whether a thread of process pid waits in the
// kernel for the other end of a named pipe it is opening.
func blockedOnFIFO(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, p := range tasks {
		if b, err := os.ReadFile(p); err == nil && string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}

// exitOf waits for cmd (started) to exit and returns its status, failing
// the test if it has not exited after a generous while: a guard against a
// process that never stops, not a measure of how long it takes.
func exitOf(t *testing.T, cmd *exec.Cmd, what string) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("%s: %v", what, err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s has not exited after a minute: only SIGKILL stopped it", what)
		return -1
	}
}

// runEngine runs the engine binary with args (and env added) to its end
// and returns its exit status and stderr.
func runEngine(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(engineBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return exitOf(t, cmd, "engine "+strings.Join(args, " ")), stderr.String()
}

// The verbs that read configuration refuse each hostile file at once, with
// an error naming the file and why: `config check` on a location whose
// project file it is (exit 1), `replay --policy` and `run --rules` on the
// file itself (exit 2 and 1, before they connect anywhere). The named pipe's other end is never
// opened: an open that waited for it would never return. A project file
// that cannot be read is refused the same way; the test drops root's
// privileges for that case, since file modes do not stop root's reads.
func TestHostileConfigVerbs(t *testing.T) {
	xdg := "XDG_CONFIG_HOME=" + t.TempDir()
	script := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(script, []byte(`{"calls":[{"id":"c","tool":"echo","args":{"text":"hi"}}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	why := map[string]string{
		"a FIFO": "a named pipe, not a regular file", "600 MB": "629145600 bytes, more than the 262144 bytes",
		"a directory": "a directory, not a regular file",
	}
	for _, kind := range hostileKinds {
		t.Run(kind, func(t *testing.T) {
			loc := t.TempDir()
			makeHostile(t, kind, projectFile(loc))
			want := why[kind]
			if kind == "a link to /dev/zero" {
				want = "config.yaml is a symbolic link"
			}
			code, stderr := runEngine(t, []string{xdg}, "config", "check", "--location", loc)
			if code != 1 || !strings.Contains(stderr, projectFile(loc)) || !strings.Contains(stderr, want) {
				t.Errorf("config check: exit %d, stderr %q; want 1 and the file refused: %s", code, stderr, want)
			}
			if kind == "a link to /dev/zero" {
				want = "a character device, not a regular file" // a file named on the command line is followed
			}
			code, stderr = runEngine(t, []string{xdg}, "replay", "--policy", projectFile(loc), "--nats", "nats://127.0.0.1:1")
			if code != 2 || !strings.Contains(stderr, projectFile(loc)) || !strings.Contains(stderr, want) {
				t.Errorf("replay --policy: exit %d, stderr %q; want 2 and the file refused: %s", code, stderr, want)
			}
			code, stderr = runEngine(t, []string{xdg}, "run", "--script", script, "--rules", projectFile(loc), "--nats", "nats://127.0.0.1:1")
			if code != 1 || !strings.Contains(stderr, projectFile(loc)) || !strings.Contains(stderr, want) {
				t.Errorf("run --rules: exit %d, stderr %q; want 1 and the file refused: %s", code, stderr, want)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		// Everything the unprivileged process needs, readable by it: a copy
		// of the binary, the location, an empty XDG_CONFIG_HOME.
		dir, err := os.MkdirTemp("", "stepgate-unreadable-*")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		bin, loc, cfg := filepath.Join(dir, "engine"), filepath.Join(dir, "loc"), filepath.Join(dir, "xdg")
		b, err := os.ReadFile(engineBin)
		if err == nil {
			err = os.WriteFile(bin, b, 0o755)
		}
		for _, d := range []string{filepath.Dir(projectFile(loc)), cfg} {
			if err == nil {
				err = os.MkdirAll(d, 0o755)
			}
		}
		if err == nil {
			err = os.WriteFile(projectFile(loc), []byte("agents: {build: {permission: {bash: allow}}}\n"), 0)
		}
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "config", "check", "--location", loc)
		cmd.Dir, cmd.Env = dir, []string{"XDG_CONFIG_HOME=" + cfg, "PATH=/usr/bin:/bin"}
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("start config check as an unprivileged user: %v", err)
		}
		if code := exitOf(t, cmd, "config check"); code != 1 || !strings.Contains(stderr.String(), projectFile(loc)+": permission denied") {
			t.Errorf("config check of an unreadable project file: exit %d, stderr %q; want 1 and permission denied", code, stderr.String())
		}
	})
}

// A verb held where its context cannot reach it still stops on SIGTERM:
// `engine run --script FIFO` blocks in the open of a named pipe nobody
// writes to (a script may be a pipe, so it is not refused), and the
// process exits with status 1 once the grace after the signal has passed,
// or at once at a second signal, saying so.
func TestSIGTERMStopsAVerbHeldInAnOpen(t *testing.T) {
	for _, tt := range []struct {
		name    string
		signals int
		says    string
	}{
		{"after the grace", 1, "engine: still running 10s after the signal (terminated): exiting"},
		{"at a second signal", 2, "engine: terminated again: exiting now"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "script.jsonl")
			makeHostile(t, "a FIFO", fifo)
			cmd := exec.Command(engineBin, "run", "--script", fifo, "--nats", "nats://127.0.0.1:1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			until(t, "engine run blocked opening the script's named pipe", func() bool { return blockedOnFIFO(cmd.Process.Pid) })
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if tt.signals == 2 { // again until it exits: signals sent together may arrive as one
				stop := make(chan struct{})
				defer close(stop)
				go func() {
					for tick := time.NewTicker(100 * time.Millisecond); ; {
						select {
						case <-stop:
							tick.Stop()
							return
						case <-tick.C:
							_ = cmd.Process.Signal(syscall.SIGTERM)
						}
					}
				}()
			}
			if code := exitOf(t, cmd, "engine run after SIGTERM"); code != 1 || !strings.Contains(stderr.String(), tt.says) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), tt.says)
			}
		})
	}
}

// ctxGuard is a context for a test's requests that ends after a generous
// while (a guard, not a measure).
func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
