package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Option adjusts Command.
type Option func(*options)

type options struct {
	helper string        // the binary run as the helper
	env    []string      // variables the command gets as they are (see WithEnv)
	idle   time.Duration // a Pool's idle time (WithIdle)
	max    int           // a Pool's bound on its helpers (WithMaxHelpers)
}

// WithEnv gives the command these variables ("NAME=value") as they are,
// after the environment given to Command is scrubbed to its allow-list:
// what the caller configured for the command on purpose (an MCP server's
// env), not what it inherited.
func WithEnv(vars []string) Option { return func(o *options) { o.env = vars } }

// WithHelper runs the helper from the binary at path (one whose main calls
// MaybeRun first, such as cmd/stepgate-sandbox) instead of the default
// (see HelperName): a small binary starts faster than the engine, whose
// package initialisation runs before MaybeRun.
func WithHelper(path string) Option { return func(o *options) { o.helper = path } }

// HelperName is the small helper binary's name (cmd/stepgate-sandbox).
// By default Command runs the helper from the file of that name next to
// this process's executable when there is one (shipped beside the engine:
// it starts in about half the time of the engine, see docs/guide/
// sandbox.md, "Cost"), else it re-executes this binary. A helper that does
// not know a field of the spec it is given (an older build beside a newer
// engine) fails closed: the call is sandbox_unavailable, never run.
const HelperName = "stepgate-sandbox"

// defaultHelper is the sibling helper binary, else this binary.
func defaultHelper() string {
	if self, err := os.Executable(); err == nil {
		if p := siblingHelper(self); p != "" {
			return p
		}
	}
	return "/proc/self/exe"
}

// siblingHelper is the file HelperName in the directory of the executable
// self when it is a regular, executable file that only its owner may
// change, owned by root or by self's owner; "" otherwise. So another user
// who can add files to that directory (a sticky /tmp) cannot plant a
// helper the engine would run: only one who could replace the engine.
func siblingHelper(self string) string {
	p := filepath.Join(filepath.Dir(self), HelperName)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || fi.Mode().Perm()&0o022 != 0 {
		return ""
	}
	own, err := os.Stat(self)
	if err != nil {
		return ""
	}
	hs, ok1 := fi.Sys().(*syscall.Stat_t)
	es, ok2 := own.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 || (hs.Uid != 0 && hs.Uid != es.Uid) {
		return ""
	}
	return p
}

// Cmd is a command that runs in the sandbox (or, under Off, as it is).
// Use its Start, Wait, Run and CombinedOutput, not the embedded
// exec.Cmd's: they read the helper's report.
type Cmd struct {
	*exec.Cmd
	policy   Policy
	report   *os.File // read end of the helper's report pipe; nil under Off
	reportW  *os.File
	spec     []byte // the helper's spec, written on its spec pipe once it starts
	specR    *os.File
	specW    *os.File
	enforced Enforced
	pooled   *pooledCall // run by a Pool's warm helper; nil otherwise
}

// Command returns the command argv run in dir under p, with environ (the
// caller's environment; under a sandbox only its allow-listed variables
// reach the command, see scrubEnv). Under Off it is argv as it is. It
// fails closed: a policy this host cannot enforce is an *Error of code
// CodeUnavailable naming what is missing, and nothing is started.
func Command(p Policy, argv []string, dir string, environ []string, opts ...Option) (*Cmd, error) {
	o := options{helper: defaultHelper()}
	for _, opt := range opts {
		opt(&o)
	}
	if len(argv) == 0 {
		return nil, invalid("no command")
	}
	if p.Mode == Off || p.Mode == "" {
		c := exec.Command(argv[0], argv[1:]...)
		c.Dir, c.Env = dir, environ
		return &Cmd{Cmd: c, policy: p, enforced: Enforced{Mode: Off, Network: NetHost}}, nil
	}
	s, err := prepare(p, argv, dir, environ, o.env)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("sandbox spec: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox report pipe: %w", err)
	}
	sr, sw, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sandbox spec pipe: %w", err)
	}
	c := &exec.Cmd{Path: o.helper, Args: []string{stage1Name, specArg}, Dir: "/",
		Env: s.Env, ExtraFiles: []*os.File{w, sr}, SysProcAttr: helperAttr(s.Policy)}
	return &Cmd{Cmd: c, policy: s.Policy, report: r, reportW: w, spec: b, specR: sr, specW: sw}, nil
}

// prepare is the helper's spec for argv under p, or why p cannot be
// enforced here (Command's checks, fail closed).
func prepare(p Policy, argv []string, dir string, environ, extra []string) (spec, error) {
	if err := p.validate(); err != nil {
		return spec{}, err
	}
	p = p.resolved()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	h := Probe()
	if envValue(environ, EnvTestNoLandlock) == "1" || envValue(extra, EnvTestNoLandlock) == "1" {
		h.LandlockABI = 0
	}
	if m := h.missing(p); len(m) > 0 {
		return spec{}, unavailable(m)
	}
	return spec{Policy: p, Argv: argv, Dir: dir, Env: append(scrubEnv(environ), extra...), Fault: envValue(environ, EnvTestFault),
		LandlockABI: h.LandlockABI}, nil
}

// helperAttr starts the helper in its namespaces, as uid and gid 0 of
// its user namespace (the engine's own outside), in a process group of
// its own, killed if the thread that started it ends.
func helperAttr(p Policy) *syscall.SysProcAttr {
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID)
	if p.network() != NetHost {
		flags |= syscall.CLONE_NEWNET
	}
	return &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
		Setpgid:     true,
	}
}

// Start starts the command; a sandbox the kernel refuses to create (a
// namespace not allowed) is sandbox_unavailable.
func (c *Cmd) Start() error {
	if c.pooled != nil {
		return c.pooled.start(c)
	}
	err := c.Cmd.Start()
	if c.reportW != nil {
		c.reportW.Close()
		c.specR.Close()
		c.reportW, c.specR = nil, nil
		go func(w *os.File, b []byte) { // the pipe holds 64 KiB; a longer spec waits for the helper
			_, _ = w.Write(b)
			w.Close()
		}(c.specW, c.spec)
	}
	if err != nil && c.report != nil {
		c.report.Close()
		return &Error{Code: CodeUnavailable, Err: err,
			Message: fmt.Sprintf("the sandbox helper could not be started (namespaces refused?): %v; the command was not run", err)}
	}
	return err
}

// Wait waits for the command. If the helper failed before the command
// ran (a mount, Landlock or seccomp refused), it is an *Error of code
// CodeUnavailable with the helper's message; otherwise it is exec.Cmd's
// Wait, and Enforced is filled.
func (c *Cmd) Wait() error {
	if c.pooled != nil {
		return c.pooled.wait(c)
	}
	werr := c.Cmd.Wait()
	if c.report == nil {
		return werr
	}
	b, rerr := io.ReadAll(c.report)
	c.report.Close()
	c.report = nil
	var rep report
	if line, _, _ := bytes.Cut(b, []byte("\n")); len(line) > 0 {
		if err := json.Unmarshal(line, &rep); err != nil {
			rep.Error = fmt.Sprintf("unreadable report %q: %v", line, err)
		}
	}
	switch {
	case rep.Error != "":
		return &Error{Code: CodeUnavailable, Message: "the sandbox helper failed before the command ran: " + rep.Error + "; the command was not run"}
	case rep.Enforced == nil:
		if rerr == nil && exitStatus(werr) == helperFailed {
			return &Error{Code: CodeUnavailable, Message: "the sandbox helper failed before the command ran; the command was not run"}
		}
		// Killed before it reported (a timeout while it set up): the
		// command did not run either.
		return werr
	}
	c.enforced = *rep.Enforced
	return werr
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// CombinedOutput runs the command and returns its stdout and stderr.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// Sandboxed reports whether the command runs in the sandbox (its policy's
// mode is not Off).
func (c *Cmd) Sandboxed() bool {
	return c.pooled != nil || c.report != nil || c.reportW != nil || c.enforced.Mode != Off
}

// Kill kills the started command and every process it started: a pooled
// command's session (its helper then kills the rest of its namespace
// unless another call is in flight), the one-shot helper's process group
// (its PID namespace ends with it), or under Off the command's process
// group when it was started with Setpgid (else the command alone). Wait
// then returns.
func (c *Cmd) Kill() error {
	if c.pooled != nil {
		return c.pooled.kill()
	}
	if c.Process == nil {
		return errors.New("sandbox: kill: not started")
	}
	if err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL); err == nil {
		return nil
	}
	return c.Process.Kill()
}

// Enforced is what was enforced, once Wait has returned; under Off it is
// Mode Off and the host's network.
func (c *Cmd) Enforced() Enforced { return c.enforced }

func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
