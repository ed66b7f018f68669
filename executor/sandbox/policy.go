// Package sandbox contains what the gate allows: it runs a command in new
// user, mount, PID and network namespaces under Landlock and a seccomp
// filter, with an allow-listed environment and rlimits, through a small
// helper stage of the engine's own binary (see MaybeRun). The rules decide
// whether a call runs; this package only bounds what it may touch. It
// imports nothing of the module.
package sandbox

// Mode is a sandbox profile's filesystem authority.
type Mode string

// The profiles. Off runs the command with the host user's full authority
// (the default, for which the spec's sentence "Bash is not sandboxed"
// stays true); ReadOnly lets it read what is not denied and write only its
// private temporary directory; WorkspaceWrite adds the location and the
// policy's extra writable roots, minus the read-only paths inside them.
const (
	Off            Mode = "off"
	ReadOnly       Mode = "read-only"
	WorkspaceWrite Mode = "workspace-write"
)

// Network is what a sandboxed process may reach.
type Network string

// The network modes. NetOff leaves it a new network namespace with only
// loopback; NetProxy adds an HTTP proxy inside (127.0.0.1, relayed to the
// host-side proxy's unix socket, which checks Policy.Allow); NetHost keeps
// the host's network (and allows inet sockets in the seccomp filter).
const (
	NetOff   Network = "off"
	NetProxy Network = "proxy"
	NetHost  Network = "host"
)

// Policy is everything the helper needs to contain one command. It is
// plain data, resolved by the engine from the configuration's profile for
// the call (the host's --sandbox default, tightened by the user's and the
// project's files), so it can be recorded and compared.
type Policy struct {
	Mode    Mode    `json:"mode"`
	Network Network `json:"network,omitempty"` // NetOff when empty
	// Allow is the proxy's allow-list, "host:port" each ("*.example.com:443"
	// matches subdomains); only with NetProxy.
	Allow []string `json:"allow,omitempty"`
	// Location is the run's workspace root: writable under WorkspaceWrite,
	// readable under both other modes.
	Location string `json:"location"`
	// Writable are extra writable roots (absolute), under WorkspaceWrite.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are paths that stay read-only even inside a writable root
	// (defaults: .git/hooks, .git/config, .stepgate and shell start-up
	// files of the location; see DefaultReadOnly).
	ReadOnly []string `json:"read_only,omitempty"`
	// Denied are paths neither readable nor writable (defaults: ~/.ssh,
	// ~/.aws, ~/.config/gcloud, ~/.netrc, the user's Stepgate and secrets
	// files, the engine's data directory, NATS credentials; see
	// DefaultDenied).
	Denied []string `json:"denied,omitempty"`
	// ProxySocket is the host-side proxy's unix socket, bound into the
	// sandbox; only with NetProxy.
	ProxySocket string `json:"proxy_socket,omitempty"`
	// Limits are the command's rlimits; a zero field takes its default
	// (see Limits).
	Limits Limits `json:"limits,omitzero"`
}

// Limits are the rlimits the helper sets on the command (and every
// process it starts). Zero means the default.
type Limits struct {
	// Procs bounds the tasks (processes and threads) of the sandbox at
	// once, which stops a fork bomb (default 1024): its PID namespace's
	// pid_max (the kernel takes no less than 301) and RLIMIT_NPROC (which
	// does not bind a command of the host's root).
	Procs uint64 `json:"procs,omitempty"`
	// FileSize is RLIMIT_FSIZE in bytes: no file grows past it (default
	// 4 GiB).
	FileSize uint64 `json:"file_size,omitempty"`
}

// The default limits; no core files are ever written (RLIMIT_CORE 0).
const (
	DefaultProcs    = 1024
	DefaultFileSize = 4 << 30
)

// withDefaults fills the zero limits.
func (l Limits) withDefaults() Limits {
	if l.Procs == 0 {
		l.Procs = DefaultProcs
	}
	if l.FileSize == 0 {
		l.FileSize = DefaultFileSize
	}
	return l
}

// Enforced is what the helper put in place for one call, recorded with
// its result.
type Enforced struct {
	Mode        Mode     `json:"mode"`
	Network     Network  `json:"network"`
	LandlockABI int      `json:"landlock_abi,omitempty"`
	Namespaces  []string `json:"namespaces,omitempty"` // "user", "mount", "pid", "net"
	Seccomp     bool     `json:"seccomp,omitempty"`
}
