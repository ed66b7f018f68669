package sandbox

import (
	"os"
	"strconv"
	"strings"

	seccomp "github.com/elastic/go-seccomp-bpf"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Host is what this host can enforce, as Probe found it.
type Host struct {
	LandlockABI int  `json:"landlock_abi"` // 0: no Landlock
	UserNS      bool `json:"user_ns"`      // this user may create a user namespace
	MountNS     bool `json:"mount_ns"`
	PIDNS       bool `json:"pid_ns"`
	NetNS       bool `json:"net_ns"`
	Seccomp     bool `json:"seccomp"` // seccomp filters (SECCOMP_SET_MODE_FILTER)
}

// maxLandlockABI is the highest Landlock ABI the helper asks for (the
// go-landlock release's newest); a newer kernel is used at this one.
const maxLandlockABI = 11

// Probe reports what this host can enforce: the Landlock ABI, the
// namespaces an unprivileged user may create, seccomp. It only reads
// /proc and asks the kernel for versions; it starts no process (a
// namespace refused at start is still refused, see Cmd.Start).
func Probe() Host {
	var h Host
	if v, err := llsys.LandlockGetABIVersion(); err == nil && v > 0 {
		h.LandlockABI = min(v, maxLandlockABI)
	}
	h.UserNS = exists("/proc/self/ns/user") && userNSAllowed()
	h.MountNS = exists("/proc/self/ns/mnt")
	h.PIDNS = exists("/proc/self/ns/pid")
	h.NetNS = exists("/proc/self/ns/net")
	h.Seccomp = seccomp.Supported()
	return h
}

// missing names what h lacks for p, empty when it can enforce it.
func (h Host) missing(p Policy) []string {
	var m []string
	if h.LandlockABI < 1 {
		m = append(m, "Landlock is not available (kernel without it, or not in the LSM list)")
	}
	if !h.UserNS {
		m = append(m, "user namespaces are not available to this user")
	}
	if !h.MountNS {
		m = append(m, "mount namespaces are not available")
	}
	if !h.PIDNS {
		m = append(m, "PID namespaces are not available")
	}
	if !h.NetNS && p.network() != NetHost {
		m = append(m, "network namespaces are not available")
	}
	if !h.Seccomp {
		m = append(m, "seccomp filters are not available")
	}
	return m
}

// userNSAllowed reads the sysctls that forbid user namespaces.
func userNSAllowed() bool {
	if n, ok := readInt("/proc/sys/user/max_user_namespaces"); ok && n == 0 {
		return false
	}
	if os.Geteuid() != 0 {
		if n, ok := readInt("/proc/sys/kernel/unprivileged_userns_clone"); ok && n == 0 {
			return false
		}
		if n, ok := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && n == 1 {
			return false
		}
	}
	return true
}

func readInt(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
