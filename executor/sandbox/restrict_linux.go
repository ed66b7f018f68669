package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// restrictThread restricts the calling thread, locked to its goroutine,
// which then starts the command (a child inherits the thread's
// credentials, Landlock domain and seccomp filter): rlimits, no
// capabilities, no_new_privs, Landlock, seccomp. Every restriction is on
// this one thread, so none needs the all-threads machinery that cgo
// binaries lack, and stage 1's other threads (the proxy relay) keep
// working. It returns what it enforced.
func restrictThread(s spec) (Enforced, error) {
	if err := setLimits(s.Policy.Limits.withDefaults()); err != nil {
		return Enforced{}, fmt.Errorf("rlimits: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return Enforced{}, fmt.Errorf("capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return Enforced{}, fmt.Errorf("no_new_privs: %w", err)
	}
	abi, err := restrictLandlock(s)
	if err != nil {
		return Enforced{}, fmt.Errorf("landlock: %w", err)
	}
	if s.Fault == "seccomp" {
		return Enforced{}, errors.New("seccomp: refused (test fault)")
	}
	if err := loadSeccomp(s.Policy.network() != NetOff); err != nil {
		return Enforced{}, fmt.Errorf("seccomp: %w", err)
	}
	e := Enforced{Mode: s.Policy.Mode, Network: s.Policy.network(), LandlockABI: abi,
		Namespaces: []string{"user", "mount", "pid"}, Seccomp: true}
	if e.Network != NetHost {
		e.Namespaces = append(e.Namespaces, "net")
	}
	return e, nil
}

func setLimits(l Limits) error {
	for _, r := range []struct {
		res int
		val uint64
	}{{unix.RLIMIT_NPROC, l.Procs}, {unix.RLIMIT_FSIZE, l.FileSize}, {unix.RLIMIT_CORE, 0}} {
		if err := unix.Setrlimit(r.res, &unix.Rlimit{Cur: r.val, Max: r.val}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", r.res, err)
		}
	}
	return nil
}

// dropCapabilities leaves the command no capability in its user
// namespace although it runs as its uid 0: the bounding set, the ambient
// and inheritable sets are emptied, so exec grants none.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the ambient set: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// restrictLandlock restricts this thread's filesystem to the view's rules
// (read everywhere, write in /tmp, /dev/shm, the devices and, under
// WorkspaceWrite, the writable roots), TCP to the proxy's port or none,
// and scopes abstract unix sockets and signals to the sandbox, at the
// best ABI of the host (go-landlock's downgrade of V11). It returns the
// ABI used.
func restrictLandlock(s spec) (int, error) {
	if s.LandlockABI < 1 {
		return 0, errors.New("not available")
	}
	if s.Fault == "landlock" {
		return 0, errors.New("landlock_restrict_self: refused (test fault)")
	}
	all := landlock.V11
	cfg := landlock.Config{HandledAccessFS: all.HandledAccessFS, Scoped: all.Scoped}
	var rules []landlock.Rule
	switch s.Policy.network() {
	case NetOff:
		cfg.HandledAccessNet = all.HandledAccessNet
	case NetProxy:
		cfg.HandledAccessNet = all.HandledAccessNet
		if port := proxyPort(s.Env); port > 0 {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	rules = append(rules,
		landlock.RODirs("/"),
		landlock.RWDirs("/tmp", "/dev/shm").WithRefer(),
		landlock.RWDirs("/dev/pts").WithIoctlDev(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").WithIoctlDev(),
	)
	if s.Policy.Mode == WorkspaceWrite {
		roots := append([]string{s.Policy.Location}, s.Policy.Writable...)
		rules = append(rules, landlock.RWDirs(roots...).WithRefer().IgnoreIfMissing())
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return 0, err
	}
	if fd < 0 {
		return 0, errors.New("no ruleset (Landlock not enforced)")
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return 0, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return min(s.LandlockABI, maxLandlockABI), nil
}

// proxyPort is the relay's port from the proxy variables.
func proxyPort(env []string) uint16 {
	v := envValue(env, "HTTP_PROXY")
	_, port, ok := strings.Cut(strings.TrimPrefix(v, "http://"), ":")
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}
