package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The pool's defaults (see WithIdle, WithMaxHelpers).
const (
	DefaultPoolIdle       = 30 * time.Second
	DefaultPoolMaxHelpers = 4
)

// WithIdle sets how long a Pool keeps a helper no call uses (default
// DefaultPoolIdle).
func WithIdle(d time.Duration) Option { return func(o *options) { o.idle = d } }

// WithMaxHelpers bounds the helpers a Pool keeps (default
// DefaultPoolMaxHelpers): past it, the least recently used idle one is
// closed.
func WithMaxHelpers(n int) Option { return func(o *options) { o.max = n } }

// Pool keeps warm sandboxes: one long-lived helper per resolved policy
// (location included), started as Command's is (namespaces, view,
// loopback, and on its one launcher thread rlimits, no capabilities,
// no_new_privs, Landlock and seccomp), that runs many calls' commands
// instead of one. Each call's command starts from that thread in a new
// session, so it is contained as a one-shot helper's command is, and what
// was enforced is the same. Between calls nothing is left: when no call is
// in flight the helper kills every other process of its PID namespace and
// empties its private /tmp and /dev/shm before the last call's exit status
// is sent. Calls in flight at once (parallel calls of one step) share the
// namespace, /tmp and the processes they leave until the last one ends.
// A helper whose view no longer matches the host (a policy path created,
// removed or replaced there) is replaced, as is one that died; a helper
// exits when its pool closes it (idle, least recently used, Close) or the
// engine dies. Network proxy calls are not pooled: each call has its own
// proxy socket and connection record, so Command runs them one-shot.
// A Pool holds no package state; its owner closes it.
type Pool struct {
	helper string
	idle   time.Duration
	max    int

	mu       sync.Mutex
	warm     map[string]*warm
	closed   bool
	starter  chan func()    // run on the pool's locked thread, the helpers' parent
	starting sync.WaitGroup // gets sending to starter
}

// warm is one pooled helper.
type warm struct {
	key      string
	proc     *exec.Cmd
	ctl      *os.File // the engine's end of the control socket
	enforced Enforced
	ready    chan struct{} // closed once it started or failed (err)
	err      error
	dead     chan struct{} // closed once its process is reaped
	stopOnce sync.Once
	// Guarded by Pool.mu:
	busy  int
	used  time.Time
	timer *time.Timer
}

// NewPool returns an empty pool. Options: WithHelper (as for Command),
// WithIdle, WithMaxHelpers.
func NewPool(opts ...Option) *Pool {
	o := options{helper: defaultHelper(), idle: DefaultPoolIdle, max: DefaultPoolMaxHelpers}
	for _, opt := range opts {
		opt(&o)
	}
	return &Pool{helper: o.helper, idle: o.idle, max: max(o.max, 1), warm: map[string]*warm{}}
}

// Command is Command's argv under p, run by a warm helper of the pool
// (started on the first call); under Off, and for network proxy, it is
// Command's. It fails closed as Command does.
func (pl *Pool) Command(p Policy, argv []string, dir string, environ []string) (*Cmd, error) {
	if len(argv) == 0 {
		return nil, invalid("no command")
	}
	if p.Mode == Off || p.Mode == "" || p.network() == NetProxy {
		return Command(p, argv, dir, environ, WithHelper(pl.helper))
	}
	s, err := prepare(p, argv, dir, environ, nil)
	if err != nil {
		return nil, err
	}
	key, err := json.Marshal(struct {
		Policy      Policy `json:"policy"`
		LandlockABI int    `json:"abi"`
		Fault       string `json:"fault"`
	}{s.Policy, s.LandlockABI, s.Fault})
	if err != nil {
		return nil, fmt.Errorf("sandbox pool key: %w", err)
	}
	c := &exec.Cmd{Path: argv[0], Args: argv, Dir: s.Dir, Env: s.Env}
	return &Cmd{Cmd: c, policy: s.Policy, pooled: &pooledCall{pool: pl, spec: s, key: string(key)}}, nil
}

// Close closes every helper (their calls in flight are killed) and waits
// until their processes are gone; the pool then refuses calls.
func (pl *Pool) Close() error {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil
	}
	pl.closed = true
	ws := make([]*warm, 0, len(pl.warm))
	for k, w := range pl.warm {
		ws = append(ws, w)
		delete(pl.warm, k)
		if w.timer != nil {
			w.timer.Stop()
		}
	}
	starter := pl.starter
	pl.mu.Unlock()
	pl.starting.Wait()
	for _, w := range ws {
		<-w.ready
		w.stop()
		if w.err == nil {
			<-w.dead
		}
	}
	if starter != nil {
		close(starter)
	}
	return nil
}

// get is a started helper for key (a new one if there is none, or the one
// there died), counted busy until release.
func (pl *Pool) get(s spec, key string) (*warm, error) {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil, &Error{Code: CodeUnavailable, Message: "the sandbox pool is closed; the command was not run"}
	}
	w := pl.warm[key]
	if w != nil && !w.gone() {
		w.busy++
		if w.timer != nil {
			w.timer.Stop()
			w.timer = nil
		}
		pl.mu.Unlock()
		<-w.ready
		if w.err != nil {
			return nil, w.err
		}
		return w, nil
	}
	if w != nil && w.busy == 0 { // gone and idle: nothing else will stop it
		if w.timer != nil {
			w.timer.Stop()
		}
		w.stop()
	}
	w = &warm{key: key, ready: make(chan struct{}), dead: make(chan struct{}), busy: 1}
	pl.warm[key] = w
	pl.evict()
	if pl.starter == nil {
		pl.starter = make(chan func())
		go starterThread(pl.starter)
	}
	starter := pl.starter
	pl.starting.Add(1)
	pl.mu.Unlock()
	done := make(chan struct{})
	starter <- func() { w.err = pl.start(w, s); close(done) }
	<-done
	pl.starting.Done()
	close(w.ready)
	if w.err != nil {
		pl.discard(w)
		return nil, w.err
	}
	return w, nil
}

// starterThread starts the helpers from one locked thread that lives as
// long as the pool: their Pdeathsig is tied to it, not to whichever
// thread of the engine ran a call (a Go thread may end), and it ends when
// the pool closes.
func starterThread(jobs chan func()) {
	runtime.LockOSThread()
	for f := range jobs {
		f()
	}
	// Returning locked ends this thread: any helper left gets SIGKILL.
}

// gone reports whether a started helper can no longer serve: it failed,
// its process ended, or its end of the control socket is closed.
func (w *warm) gone() bool {
	select {
	case <-w.ready:
	default:
		return false // starting: wait for it
	}
	if w.err != nil {
		return true
	}
	select {
	case <-w.dead:
		return true
	default:
	}
	fds := []unix.PollFd{{Fd: int32(w.ctl.Fd()), Events: unix.POLLRDHUP}}
	n, err := unix.Poll(fds, 0)
	return err != nil || (n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLRDHUP|unix.POLLNVAL) != 0)
}

// release ends one call's use of w; an idle helper is closed after the
// pool's idle time, one no longer in the pool at once.
func (pl *Pool) release(w *warm) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	w.busy--
	w.used = time.Now()
	if w.busy > 0 {
		return
	}
	if pl.warm[w.key] != w || pl.closed {
		w.stop()
		return
	}
	w.timer = time.AfterFunc(pl.idle, func() {
		pl.mu.Lock()
		defer pl.mu.Unlock()
		if w.busy == 0 && pl.warm[w.key] == w {
			delete(pl.warm, w.key)
			w.stop()
		}
	})
}

// discard takes w out of the pool (it died or its view went stale); it
// stops once no call uses it.
func (pl *Pool) discard(w *warm) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.warm[w.key] == w {
		delete(pl.warm, w.key)
	}
}

// evict closes the least recently used idle helpers past the bound.
func (pl *Pool) evict() {
	for len(pl.warm) > pl.max {
		var lru *warm
		for _, w := range pl.warm {
			if w.busy == 0 && (lru == nil || w.used.Before(lru.used)) {
				lru = w
			}
		}
		if lru == nil {
			return // all busy: the bound holds again as they end
		}
		delete(pl.warm, lru.key)
		if lru.timer != nil {
			lru.timer.Stop()
		}
		lru.stop()
	}
}

// stop closes the control socket: the helper exits, its namespace with it.
func (w *warm) stop() {
	w.stopOnce.Do(func() {
		if w.ctl != nil {
			w.ctl.Close()
		}
	})
}

// start starts w's helper for s and waits for its report.
func (pl *Pool) start(w *warm, s spec) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox control socket: %w", err)
	}
	ctl, theirs := os.NewFile(uintptr(fds[0]), "sandbox-ctl"), os.NewFile(uintptr(fds[1]), "sandbox-ctl")
	defer theirs.Close()
	s.Argv, s.Dir, s.Env, s.Serve = nil, "", nil, true
	b, err := json.Marshal(s)
	if err != nil {
		ctl.Close()
		return fmt.Errorf("sandbox spec: %w", err)
	}
	r, rw, err := os.Pipe()
	if err != nil {
		ctl.Close()
		return fmt.Errorf("sandbox report pipe: %w", err)
	}
	defer r.Close()
	sr, sw, err := os.Pipe()
	if err != nil {
		ctl.Close()
		rw.Close()
		return fmt.Errorf("sandbox spec pipe: %w", err)
	}
	c := &exec.Cmd{Path: pl.helper, Args: []string{stage1Name, specArg}, Dir: "/",
		ExtraFiles: []*os.File{rw, sr, theirs}, SysProcAttr: helperAttr(s.Policy)}
	err = c.Start()
	rw.Close()
	sr.Close()
	if err != nil {
		sw.Close()
		ctl.Close()
		return &Error{Code: CodeUnavailable, Err: err,
			Message: fmt.Sprintf("the sandbox helper could not be started (namespaces refused?): %v; the command was not run", err)}
	}
	go func() { _, _ = sw.Write(b); sw.Close() }()
	out, _ := io.ReadAll(r)
	var rep report
	if line, _, _ := bytes.Cut(out, []byte("\n")); len(line) > 0 {
		if err := json.Unmarshal(line, &rep); err != nil {
			rep.Error = fmt.Sprintf("unreadable report %q: %v", line, err)
		}
	}
	if rep.Error != "" || rep.Enforced == nil {
		ctl.Close()
		_ = c.Process.Kill()
		_ = c.Wait()
		msg := "the sandbox helper failed before the command ran"
		if rep.Error != "" {
			msg += ": " + rep.Error
		}
		return &Error{Code: CodeUnavailable, Message: msg + "; the command was not run"}
	}
	w.proc, w.ctl, w.enforced = c, ctl, *rep.Enforced
	go func() { _ = c.Wait(); close(w.dead) }()
	return nil
}
