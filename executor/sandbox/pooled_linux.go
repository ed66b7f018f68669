package sandbox

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"sync"

	"golang.org/x/sys/unix"
)

// pooledCall is a Cmd run by a Pool's helper.
type pooledCall struct {
	pool *Pool
	spec spec
	key  string

	w      *warm
	conn   *net.UnixConn // the engine's end of the call socket
	rd     *bufio.Reader
	final  *reply // the exit, once read (or sent with the start)
	copies sync.WaitGroup
	errs   []error // the copies' errors
	mu     sync.Mutex
}

// staleTries bounds the helpers a call tries when the first ones are
// stale or died before taking the call.
const staleTries = 3

func (pc *pooledCall) start(c *Cmd) error {
	if pc.w != nil {
		return errors.New("sandbox: already started")
	}
	req, err := json.Marshal(request{Argv: pc.spec.Argv, Dir: pc.spec.Dir, Env: pc.spec.Env})
	if err != nil {
		return fmt.Errorf("sandbox request: %w", err)
	}
	for try := 1; ; try++ {
		w, err := pc.pool.get(pc.spec, pc.key)
		if err != nil {
			return err
		}
		retry, err := pc.send(c, w, req)
		if err == nil {
			pc.w = w
			return nil
		}
		pc.pool.discard(w)
		pc.pool.release(w)
		if !retry || try == staleTries {
			return err
		}
	}
}

// send hands the call to w and reads its first reply. retry: nothing ran
// and another helper may take it (w is stale, or died before it took it).
func (pc *pooledCall) send(c *Cmd, w *warm, req []byte) (retry bool, err error) {
	st, err := newStdio(c)
	if err != nil {
		return false, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		st.abort()
		return false, fmt.Errorf("sandbox call socket: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "sandbox-call"), os.NewFile(uintptr(fds[1]), "sandbox-call")
	rights := unix.UnixRights(int(st.child[0].Fd()), int(st.child[1].Fd()), int(st.child[2].Fd()), int(theirs.Fd()))
	err = unix.Sendmsg(int(w.ctl.Fd()), []byte{'c'}, rights, nil, 0)
	theirs.Close()
	st.sent()
	fc, cerr := net.FileConn(mine)
	mine.Close()
	if err != nil || cerr != nil {
		st.abort()
		if fc != nil {
			fc.Close()
		}
		if err != nil { // the helper's end is closed: it died
			return true, unavailableErr("the sandbox helper is gone", err)
		}
		return false, fmt.Errorf("sandbox call socket: %w", cerr)
	}
	conn := fc.(*net.UnixConn)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(req)))
	if _, err := conn.Write(append(n[:], req...)); err != nil {
		st.abort()
		conn.Close()
		return true, unavailableErr("the sandbox helper did not take the call", err)
	}
	rd := bufio.NewReader(conn)
	first, err := readReply(rd)
	if err != nil {
		// A helper killed just before (its threads still exiting) accepts
		// the request into its socket but never reads it.
		st.abort()
		conn.Close()
		return true, unavailableErr("the sandbox helper ended before it took the call", err)
	}
	if first.Taken {
		first, err = readReply(rd)
	}
	switch {
	case err != nil:
		st.abort()
		conn.Close()
		return false, unavailableErr("the sandbox helper ended before it started the command", err)
	case first.Error != "":
		st.abort()
		conn.Close()
		return first.Stale, &Error{Code: CodeUnavailable, Message: first.Error + "; the command was not run"}
	}
	pc.conn, pc.rd = conn, rd
	if first.Exit != nil {
		pc.final = &first
	}
	st.run(&pc.copies, pc.copied)
	return false, nil
}

func unavailableErr(msg string, err error) *Error {
	return &Error{Code: CodeUnavailable, Err: err, Message: fmt.Sprintf("%s: %v; the command was not run", msg, err)}
}

func readReply(rd *bufio.Reader) (reply, error) {
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return reply{}, err
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		return reply{}, fmt.Errorf("unreadable reply %q: %w", line, err)
	}
	return r, nil
}

func (pc *pooledCall) copied(err error) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if err != nil {
		pc.errs = append(pc.errs, err)
	}
}

// wait reads the exit and waits for the output to be copied.
func (pc *pooledCall) wait(c *Cmd) error {
	if pc.w == nil {
		return errors.New("sandbox: not started")
	}
	if pc.conn == nil {
		return errors.New("sandbox: Wait was already called")
	}
	if pc.final == nil {
		if r, err := readReply(pc.rd); err == nil && r.Exit != nil {
			pc.final = &r
		}
	}
	pc.copies.Wait()
	pc.conn.Close()
	pc.conn = nil
	pc.pool.release(pc.w)
	c.enforced = pc.w.enforced
	switch {
	case pc.final == nil:
		return &ExitError{Code: -1}
	case *pc.final.Exit != 0:
		return &ExitError{Code: *pc.final.Exit}
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return errors.Join(pc.errs...)
}

// kill closes the call's socket for writing: the helper kills the call's
// session, then sends its exit.
func (pc *pooledCall) kill() error {
	if pc.conn == nil {
		return errors.New("sandbox: kill: not running")
	}
	return pc.conn.CloseWrite()
}

// stdio is a pooled call's standard streams: the files sent to the helper
// and, for a reader or writer that is not a file, a pipe and its copy.
type stdio struct {
	child [3]*os.File
	owned []*os.File // files of child this call opened, closed once sent
	ends  []*os.File // the pipes' other ends, ours
	jobs  []func() error
}

func newStdio(c *Cmd) (*stdio, error) {
	s := &stdio{}
	var err error
	if s.child[0], err = s.in(c.Stdin); err != nil {
		s.abort()
		return nil, err
	}
	if s.child[1], err = s.out(c.Stdout); err != nil {
		s.abort()
		return nil, err
	}
	if c.Stderr != nil && reflect.TypeOf(c.Stderr).Comparable() && reflect.TypeOf(c.Stdout) == reflect.TypeOf(c.Stderr) && c.Stderr == c.Stdout {
		s.child[2] = s.child[1] // one pipe, as exec.Cmd: one writer at a time, in order
	} else if s.child[2], err = s.out(c.Stderr); err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

func (s *stdio) in(r io.Reader) (*os.File, error) {
	if f, ok := r.(*os.File); ok {
		return f, nil
	}
	if r == nil {
		f, err := os.Open(os.DevNull)
		if err == nil {
			s.owned = append(s.owned, f)
		}
		return f, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.owned, s.ends = append(s.owned, pr), append(s.ends, pw)
	s.jobs = append(s.jobs, func() error {
		_, err := io.Copy(pw, r)
		pw.Close()
		if errors.Is(err, unix.EPIPE) || errors.Is(err, os.ErrClosed) {
			err = nil // the command did not read it all
		}
		return err
	})
	return pr, nil
}

func (s *stdio) out(w io.Writer) (*os.File, error) {
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	if w == nil {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err == nil {
			s.owned = append(s.owned, f)
		}
		return f, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.owned, s.ends = append(s.owned, pw), append(s.ends, pr)
	s.jobs = append(s.jobs, func() error {
		_, err := io.Copy(w, pr)
		pr.Close()
		return err
	})
	return pw, nil
}

// sent closes the files the helper now holds.
func (s *stdio) sent() {
	for _, f := range s.owned {
		f.Close()
	}
	s.owned = nil
}

// abort closes everything: the call does not run.
func (s *stdio) abort() {
	s.sent()
	for _, f := range s.ends {
		f.Close()
	}
	s.ends, s.jobs = nil, nil
}

// run starts the copies.
func (s *stdio) run(wg *sync.WaitGroup, done func(error)) {
	for _, j := range s.jobs {
		wg.Go(func() { done(j()) })
	}
}
