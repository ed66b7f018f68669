//go:build linux

package sandbox_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// attack is the attack program: the test binary run as arg0
// sandbox-attack, one attack per invocation, printing "ok ..." when the
// attack worked and the error it met otherwise (exit 1).
func attack(args []string) int {
	if len(args) == 0 {
		fmt.Println("no attack")
		return 2
	}
	runtime.LockOSThread()
	out, err := attacks(args[0], args[1:])
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ok", out)
	return 0
}

func attacks(name string, a []string) (string, error) {
	switch name {
	case "write": // write a[0]
		return "", os.WriteFile(a[0], []byte("pwned\n"), 0o644)
	case "read":
		b, err := os.ReadFile(a[0])
		return fmt.Sprintf("%q", b), err
	case "symlink": // symlink a[1] -> a[0], write through it
		if err := os.Symlink(a[0], a[1]); err != nil {
			return "", err
		}
		return "", os.WriteFile(a[1], []byte("pwned\n"), 0o644)
	case "hardlink":
		if err := os.Link(a[0], a[1]); err != nil {
			return "", err
		}
		return "", os.WriteFile(a[1], []byte("pwned\n"), 0o644)
	case "mount":
		if err := unix.Mount("tmpfs", a[0], "tmpfs", 0, ""); err != nil {
			return "", fmt.Errorf("mount: %w", err)
		}
		return "", unix.Unmount(a[0], 0)
	case "fsopen":
		fd, err := unix.Fsopen("tmpfs", 0)
		if err != nil {
			return "", fmt.Errorf("fsopen: %w", err)
		}
		return "", unix.Close(fd)
	case "clone-newuser":
		c := exec.Command("true")
		c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		return "", c.Run()
	case "chroot":
		if err := unix.Chroot(a[0]); err != nil {
			return "", fmt.Errorf("chroot: %w", err)
		}
		return "", nil
	case "setns":
		f, err := os.Open(a[0])
		if err != nil {
			return "", err
		}
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			return "", fmt.Errorf("setns: %w", err)
		}
		return "", nil
	case "ptrace":
		pid, _ := strconv.Atoi(a[0])
		if err := unix.PtraceAttach(pid); err != nil {
			return "", fmt.Errorf("ptrace: %w", err)
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
		return "", unix.PtraceDetach(pid)
	case "kill":
		pid, _ := strconv.Atoi(a[0])
		if err := unix.Kill(pid, unix.SIGTERM); err != nil {
			return "", fmt.Errorf("kill: %w", err)
		}
		return "", nil
	case "dial": // dial a[0] a[1], send a line, read a line
		c, err := net.DialTimeout(a[0], a[1], 10*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("stepgate\n")); err != nil {
			return "", err
		}
		if a[0] == "udp" {
			return "sent", nil
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		return fmt.Sprintf("%q", line), err
	case "proxy": // dial the proxy the environment names
		return attacks("dial", []string{"tcp", strings.TrimPrefix(os.Getenv("HTTP_PROXY"), "http://")})
	case "ping":
		return ping()
	case "io_uring":
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			return "", fmt.Errorf("io_uring_setup: %w", errno)
		}
		return "", unix.Close(int(fd))
	case "tiocsti":
		for _, b := range []byte(a[0]) {
			if _, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); errno != 0 {
				return "", fmt.Errorf("ioctl(TIOCSTI): %w", errno)
			}
		}
		return "", nil
	case "fork": // start a[0] sleeping processes at once
		return forks(a[0])
	case "bigfile":
		f, err := os.Create(a[0])
		if err != nil {
			return "", err
		}
		defer f.Close()
		return "", f.Truncate(10 << 30)
	case "env":
		return fmt.Sprint(os.Environ()), nil
	case "keyctl":
		id, err := unix.AddKey("user", "stepgate-escape", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		if err != nil {
			return "", fmt.Errorf("add_key: %w", err)
		}
		return strconv.Itoa(id), nil
	case "bpf":
		attr := [5]uint32{2 /* array */, 4, 4, 1, 0}
		fd, _, errno := unix.Syscall(unix.SYS_BPF, 0 /* BPF_MAP_CREATE */, uintptr(unsafe.Pointer(&attr[0])), unsafe.Sizeof(attr))
		if errno != 0 {
			return "", fmt.Errorf("bpf: %w", errno)
		}
		return "", unix.Close(int(fd))
	case "perf":
		attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK,
			Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
		fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, 0)
		if err != nil {
			return "", fmt.Errorf("perf_event_open: %w", err)
		}
		return "", unix.Close(fd)
	}
	return "", fmt.Errorf("unknown attack %q", name)
}

func ping() (string, error) {
	c, err := icmp.ListenPacket("ip4:icmp", "0.0.0.0")
	if err != nil {
		return "", err
	}
	defer c.Close()
	m := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: os.Getpid() & 0xffff, Seq: 1, Data: []byte("stepgate")}}
	b, _ := m.Marshal(nil)
	if _, err := c.WriteTo(b, &net.IPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1500)
	for {
		n, _, err := c.ReadFrom(buf)
		if err != nil {
			return "", err
		}
		if r, err := icmp.ParseMessage(1, buf[:n]); err == nil && r.Type == ipv4.ICMPTypeEchoReply {
			return "echo reply", nil
		}
	}
}

func forks(count string) (string, error) {
	n, _ := strconv.Atoi(count)
	var started []*exec.Cmd
	defer func() {
		for _, c := range started {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for i := range n {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			return "", fmt.Errorf("fork refused after %d: %w", i, err)
		}
		started = append(started, c)
	}
	return fmt.Sprintf("forked %d", n), nil
}
