//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// Host is what this host can enforce: nothing, off Linux.
type Host struct {
	LandlockABI int  `json:"landlock_abi"`
	UserNS      bool `json:"user_ns"`
	MountNS     bool `json:"mount_ns"`
	PIDNS       bool `json:"pid_ns"`
	NetNS       bool `json:"net_ns"`
	Seccomp     bool `json:"seccomp"`
}

// Probe reports that this host can enforce nothing.
func Probe() Host { return Host{} }

// Option adjusts Command.
type Option func(*options)

type options struct {
	helper string
	idle   time.Duration
	max    int
}

// WithHelper names the helper binary (unused off Linux).
func WithHelper(path string) Option { return func(o *options) { o.helper = path } }

// WithEnv adds variables to the command's environment (unused off Linux,
// where nothing is sandboxed).
func WithEnv(vars []string) Option { return func(*options) {} }

// Cmd is a command; off Linux only Off runs.
type Cmd struct {
	*exec.Cmd
	enforced Enforced
}

// Command runs argv as it is under Off, and refuses every sandbox.
func Command(p Policy, argv []string, dir string, environ []string, _ ...Option) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, invalid("no command")
	}
	if p.Mode != Off && p.Mode != "" {
		return nil, unavailable([]string{"the sandbox needs Linux"})
	}
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir, c.Env = dir, environ
	return &Cmd{Cmd: c, enforced: Enforced{Mode: Off, Network: NetHost}}, nil
}

// Sandboxed is false: off Linux nothing is.
func (c *Cmd) Sandboxed() bool { return false }

// Enforced is Mode Off.
func (c *Cmd) Enforced() Enforced { return c.enforced }

// MaybeRun returns: there is no helper off Linux.
func MaybeRun() {}

// HelperName is the small helper binary's name (cmd/stepgate-sandbox);
// there is no helper off Linux.
const HelperName = "stepgate-sandbox"

// WithIdle sets a Pool's idle time (unused off Linux).
func WithIdle(d time.Duration) Option { return func(o *options) { o.idle = d } }

// WithMaxHelpers bounds a Pool's helpers (unused off Linux).
func WithMaxHelpers(n int) Option { return func(o *options) { o.max = n } }

// Pool is Command off Linux: there is no helper to keep.
type Pool struct{}

// NewPool returns a pool.
func NewPool(...Option) *Pool { return &Pool{} }

// Command is Command.
func (*Pool) Command(p Policy, argv []string, dir string, environ []string) (*Cmd, error) {
	return Command(p, argv, dir, environ)
}

// Close does nothing.
func (*Pool) Close() error { return nil }

// Kill kills the command's process group when it was started with
// Setpgid, else the command.
func (c *Cmd) Kill() error {
	if c.Process == nil {
		return errors.New("sandbox: kill: not started")
	}
	if err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL); err == nil {
		return nil
	}
	return c.Process.Kill()
}
