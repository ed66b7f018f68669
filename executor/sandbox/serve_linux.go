package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ctlFD is a pooled helper's control socket (a SOCK_SEQPACKET pair's
// end): each record is one call, its stdin, stdout, stderr and call
// socket passed with SCM_RIGHTS. Its end of file (the pool closed it, or
// the engine died) ends the helper, and the PID namespace with it.
const ctlFD = 5

// maxRequest bounds a pooled call's request (its argv and environment).
const maxRequest = 16 << 20

// request is one pooled call, on its call socket: a 4-byte big-endian
// length, then this JSON. The environment is already scrubbed (scrubEnv).
type request struct {
	Argv []string `json:"argv"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
}

// reply is a pooled helper's word on a call, one JSON line each on the
// call socket: first Started (or Exit, for a command that could not be
// started, as a shell reports it; or Error, and nothing ran), then Exit
// once the command ended (128+n for a command ended by signal n).
type reply struct {
	// Taken: the helper read the call's request; sent before it starts
	// anything, so a helper that ends before taking a call provably ran
	// nothing of it, and the pool gives the call to another.
	Taken   bool   `json:"taken,omitempty"`
	Started bool   `json:"started,omitempty"`
	Exit    *int   `json:"exit,omitempty"`
	Error   string `json:"error,omitempty"`
	// Stale: the view no longer matches the host (a denied, read-only or
	// writable path was created, removed or replaced since the helper
	// built it): the pool replaces the helper; nothing ran.
	Stale bool `json:"stale,omitempty"`
}

// server is a pooled helper: stage 1 built the view once, and its main
// thread, restricted once, starts every call's command (a child inherits
// the thread's Landlock domain, seccomp filter, capabilities and
// no_new_privs). Its other threads receive the calls, reap, and clean the
// namespace whenever no call is in flight.
type server struct {
	marks  []mark
	launch chan launch // to the restricted main thread
	kick   chan struct{}
	mu     sync.Mutex // held while a call starts and while a call's end is handled
	calls  map[int]*served
}

// served is one call in the helper.
type served struct {
	pid  int
	sock *os.File
	over chan struct{} // closed once its last reply is written
}

type launch struct {
	path  string
	req   request
	files []*os.File
	done  chan launched
}

type launched struct {
	pid int
	err error
}

// serve is stage 1's end for a pooled helper: it records the view, then
// restricts this thread, reports, and starts calls' commands on it until
// the control socket ends.
func serve(s spec) (int, error) {
	syscall.CloseOnExec(ctlFD)
	marks := markView(s.Policy)
	e, err := restrictThread(s)
	if err != nil {
		return 0, err
	}
	writeReport(report{Enforced: &e})
	sv := &server{marks: marks, launch: make(chan launch), kick: make(chan struct{}, 1), calls: map[int]*served{}}
	go sv.reap()
	go sv.receive()
	for l := range sv.launch {
		p, err := os.StartProcess(l.path, l.req.Argv, &os.ProcAttr{Dir: l.req.Dir, Env: l.req.Env, Files: l.files,
			Sys: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}})
		if err != nil {
			l.done <- launched{err: err}
			continue
		}
		pid := p.Pid
		_ = p.Release() // the reaper waits for it
		l.done <- launched{pid: pid}
	}
	return 0, nil
}

// receive takes the calls from the control socket; at its end the helper
// exits (the kernel then kills what is left in the PID namespace).
func (sv *server) receive() {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(ctlFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			os.Exit(0)
		}
		var fds []int
		if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
			for _, m := range msgs {
				if rights, err := unix.ParseUnixRights(&m); err == nil {
					fds = append(fds, rights...)
				}
			}
		}
		if len(fds) != 4 || flags&unix.MSG_CTRUNC != 0 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		files := make([]*os.File, 4)
		for i, fd := range fds {
			files[i] = os.NewFile(uintptr(fd), "call")
		}
		go sv.handle(files[:3], files[3])
	}
}

// handle runs one call: its request, its start, then the wait for the
// engine's end of the call socket, whose close kills the call's session.
func (sv *server) handle(stdio []*os.File, sock *os.File) {
	defer sock.Close()
	c := &served{sock: sock, over: make(chan struct{})}
	req, err := readRequest(sock)
	started := false
	if err != nil {
		c.send(reply{Error: "request: " + err.Error()})
	} else {
		c.send(reply{Taken: true})
		started = sv.start(c, req, stdio)
	}
	for _, f := range stdio {
		f.Close()
	}
	if !started {
		close(c.over)
	}
	var b [1]byte
	_, _ = sock.Read(b[:]) // the engine's end closed: done, or killed
	sv.mu.Lock()
	if sv.calls[c.pid] == c {
		killSession(c.pid)
	}
	sv.mu.Unlock()
	<-c.over
}

func readRequest(r io.Reader) (request, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return request{}, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxRequest {
		return request{}, fmt.Errorf("%d bytes: at most %d", size, maxRequest)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return request{}, err
	}
	var req request
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return request{}, err
	}
	if len(req.Argv) == 0 {
		return request{}, errors.New("no command")
	}
	return req, nil
}

// start starts the call's command from the restricted thread, unless the
// view went stale; it reports whether the command runs.
func (sv *server) start(c *served, req request, stdio []*os.File) bool {
	path, err := lookPath(req.Argv[0], req.Env, req.Dir)
	if err != nil { // the command's own failure, as a shell reports it
		fmt.Fprintf(stdio[2], "stepgate-sandbox: %s: command not found\n", req.Argv[0])
		c.send(reply{Exit: exitCode(127)})
		return false
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if what := sv.changed(); what != "" {
		c.send(reply{Stale: true, Error: "the sandbox's view is stale: " + what})
		return false
	}
	done := make(chan launched)
	sv.launch <- launch{path: path, req: req, files: stdio, done: done}
	l := <-done
	if l.err != nil {
		fmt.Fprintf(stdio[2], "stepgate-sandbox: %v\n", l.err)
		c.send(reply{Exit: exitCode(127)})
		return false
	}
	c.pid = l.pid
	sv.calls[l.pid] = c
	select {
	case sv.kick <- struct{}{}:
	default:
	}
	c.send(reply{Started: true})
	return true
}

// reap waits for every process of the namespace (its orphans are this
// process's children). A call's command ending ends its session; the
// last call in flight ending ends every other process of the namespace
// and empties /tmp and /dev/shm, before its exit status is sent: the next
// call starts in a namespace as fresh as a one-shot helper's.
func (sv *server) reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			<-sv.kick
			continue
		case err != nil:
			fmt.Fprintln(os.Stderr, "stepgate-sandbox: wait:", err)
			os.Exit(helperFailed)
		}
		sv.mu.Lock()
		if c := sv.calls[pid]; c != nil {
			delete(sv.calls, pid)
			if len(sv.calls) == 0 {
				sweep()
			} else {
				killSession(pid)
			}
			code := ws.ExitStatus()
			if ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			c.send(reply{Exit: exitCode(code)})
			close(c.over)
		}
		sv.mu.Unlock()
	}
}

func (c *served) send(r reply) {
	b, _ := json.Marshal(r)
	_, _ = c.sock.Write(append(b, '\n'))
}

func exitCode(n int) *int { return &n }

// sweep kills every process of the namespace but this one and waits
// until they are gone, then empties the private /tmp and /dev/shm (their
// roots stay: the Landlock rules name them).
func sweep() {
	for {
		pids := others()
		if len(pids) == 0 {
			break
		}
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err == unix.ECHILD {
			// Not this process's children yet: their parents are dying.
			_, _ = unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			_ = unix.Nanosleep(&unix.Timespec{Nsec: 200_000}, nil)
		}
	}
	for _, d := range []string{"/tmp", "/dev/shm"} {
		emptyDir(d)
	}
}

// killSession kills the call's process group and every process of its
// session (a process that made itself another group).
func killSession(sid int) {
	_ = unix.Kill(-sid, unix.SIGKILL)
	for _, p := range others() {
		if s, ok := sessionOf(p); ok && s == sid {
			_ = unix.Kill(p, unix.SIGKILL)
		}
	}
}

// others are the processes of the namespace but this one.
func others() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var pids []int
	for _, n := range names {
		if p, err := strconv.Atoi(n); err == nil && p != 1 {
			pids = append(pids, p)
		}
	}
	return pids
}

func sessionOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp session
	if len(f) < 4 {
		return 0, false
	}
	s, err := strconv.Atoi(f[3])
	return s, err == nil
}

// emptyDir removes what is in dir on dir's own file system, never
// entering another mount: a bind or cover of the view under the private
// /tmp (a location under the host's /tmp has its mount point there) and
// the directories that lead to one stay as the view built them.
func emptyDir(dir string) {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return
	}
	clean(dir, st.Dev)
	_ = os.Chmod(dir, os.ModeSticky|0o777)
}

func clean(dir string, dev uint64) {
	names, _ := readNames(dir)
	for _, n := range names {
		p := filepath.Join(dir, n)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Dev != dev {
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			clean(p, dev)
			_ = unix.Rmdir(p) // refused while a mount point is under it
		} else {
			_ = unix.Unlink(p)
		}
	}
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// lookPath finds name as exec.LookPath does, in the call's PATH, a
// relative path from the call's directory (where the command starts).
func lookPath(name string, env []string, cwd string) (string, error) {
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	if strings.Contains(name, "/") {
		return name, executable(at(name))
	}
	for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(at(p)) == nil {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}
