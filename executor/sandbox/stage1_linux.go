package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// stage1 is PID 1 of the sandbox's namespaces: it builds the view, brings
// loopback up, starts the proxy relay (NetProxy), restricts its main
// thread (restrictThread), reports, starts the command from that thread in
// a new session (no TIOCSTI into the engine's terminal) and reaps every
// process until the command's ends, whose status is its own. When it
// exits the kernel kills what is left in the PID namespace; it dies with
// the engine (Pdeathsig). A pooled helper (spec.Serve) serves calls
// instead of one command (see serve).
func stage1(s spec) (int, error) {
	if err := buildView(s); err != nil {
		return 0, err
	}
	// Not dumpable: the command (same uid, no capabilities) cannot read
	// this process's /proc/1/{environ,mem,root,…} nor attach to it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	// The command may signal its PID 1; ignored signals do not reach it
	// (SIGKILL from inside the namespace never does).
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	if s.Policy.network() != NetHost {
		if err := loopbackUp(); err != nil {
			return 0, fmt.Errorf("loopback: %w", err)
		}
	}
	if s.Serve {
		if s.Policy.network() == NetProxy {
			return 0, errors.New("a pooled helper has no proxy relay")
		}
		return serve(s)
	}
	if s.Policy.network() == NetProxy {
		addr, err := startRelay(ProxyPath)
		if err != nil {
			return 0, fmt.Errorf("proxy relay: %w", err)
		}
		s.Env = append(s.Env, proxyEnv(addr)...)
	}
	path, err := exec.LookPath(s.Argv[0])
	if err != nil { // the command's own failure, as a shell reports it
		fmt.Fprintf(os.Stderr, "stepgate-sandbox: %s: command not found\n", s.Argv[0])
		return 127, nil
	}
	e, err := restrictThread(s)
	if err != nil {
		return 0, err
	}
	writeReport(report{Enforced: &e})
	p, err := os.StartProcess(path, s.Argv, &os.ProcAttr{
		Dir: s.Dir, Env: s.Env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "stepgate-sandbox: %v\n", err)
		return 127, nil
	}
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait: %w", err)
		}
		if pid != p.Pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ws.ExitStatus(), nil
	}
}

// loopbackUp sets lo up in the new network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// startRelay listens on 127.0.0.1 inside the sandbox's network namespace
// and relays each connection to the host-side proxy's unix socket; it
// returns the address.
func startRelay(socket string) (string, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go relay(c, socket)
		}
	}()
	return l.Addr().String(), nil
}

func relay(c net.Conn, socket string) {
	defer c.Close()
	u, err := net.Dial("unix", socket)
	if err != nil {
		fmt.Fprintf(os.Stderr, "stepgate-sandbox: proxy unreachable: %v\n", err)
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(u, c); closeWrite(u); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, u); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
