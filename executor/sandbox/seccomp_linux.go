package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM in the sandbox: debugging and memory of
// other processes, the mount table and namespaces, the kernel's keys,
// BPF, io_uring (whose operations no seccomp filter sees), perf, kernel
// modules and kexec, root changes.
func deniedSyscalls() []string {
	return []string{
		"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
		"mount", "umount2", "pivot_root", "chroot", "setns",
		"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
		"keyctl", "add_key", "request_key",
		"bpf", "perf_event_open", "userfaultfd",
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
		"open_by_handle_at", "name_to_handle_at", "quotactl", "swapon", "swapoff", "reboot", "acct",
		"iopl", "ioperm", "syslog",
	}
}

// seccompPolicy is the filter: the denied syscalls, unshare and clone of a
// new user namespace, socket() of any family but AF_UNIX unless inet is
// allowed (NetHost; NetProxy, whose namespace has only loopback and the
// relay, Landlock holding TCP to the relay's port) (EPERM each), and clone3
// ENOSYS (its flags are in memory no filter can read; the C library then
// falls back to clone, which is checked).
func seccompPolicy(inet bool) seccomp.Policy {
	eperm := seccomp.ActionErrno
	enosys := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	withArgs := []seccomp.NameWithConditions{
		{Name: "unshare", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}},
		{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}}},
	}
	if !inet {
		withArgs = append(withArgs, seccomp.NameWithConditions{Name: "socket",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX}}})
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: eperm, Names: deniedSyscalls(), NamesWithCondtions: withArgs},
			{Action: enosys, Names: []string{"clone3"}},
		},
	}
}

// loadSeccomp installs the filter on this thread (it execs next), behind
// two checks written by hand: calls of another architecture than the
// native one (int 0x80 on amd64) fail with ENOSYS (the library's filter
// would allow them, unchecked), and ioctl TIOCSTI and TIOCLINUX fail with
// EPERM, compared on the low 32 bits of the request as the kernel reads
// it (the library compares all 64, which a request with high bits set
// would pass).
func loadSeccomp(inet bool) error {
	p := seccompPolicy(inet)
	insts, err := p.Assemble()
	if err != nil {
		return fmt.Errorf("assemble: %w", err)
	}
	native, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	guard := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.SYS_IOCTL, SkipTrue: 4},
		bpf.LoadAbsolute{Off: 24, Size: 4}, // low half of args[1] (little-endian)
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.TIOCLINUX, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
	raw, err := bpf.Assemble(append(guard, insts...))
	if err != nil {
		return fmt.Errorf("assemble: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("seccomp(SET_MODE_FILTER): %w", errno)
	}
	return nil
}
