//go:build !linux

package sandbox

import "os/exec"

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

type options struct{ helper string }

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
