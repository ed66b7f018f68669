package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/internal/backoff"
)

// Options configure a [Client].
type Options struct {
	// Resolve returns the server as it is to be connected now: the caller
	// materializes its secrets here, so each (re)connect resolves them at
	// the moment of use. Required.
	Resolve func(ctx context.Context) (Server, error)
	// OnChange is called with the server's tool set after each connect,
	// after each tools/list_changed (listed again), and with an empty set
	// in state Down when the connection is lost or cannot be made (once per
	// outage, not per attempt). Calls are serial, on Run's goroutine; the
	// callback may block (Run waits), but must not call Run.
	OnChange func(ctx context.Context, set ToolSet)
	// Logger receives warnings (skipped tools, lost connections) and, at
	// debug level, a stdio server's stderr. Default slog.Default().
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the delay between connection
	// attempts: it doubles from MinBackoff after each failure up to
	// MaxBackoff, and each wait is drawn from [d/2, d). Defaults 500ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// KeepAlive pings the server at that interval and drops the connection
	// when it stops answering, so an HTTP server that went away is noticed
	// without a call (a stdio server's exit is noticed at once). Default
	// 30s; negative disables it.
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection attempt, listing included.
	// Default 30s.
	ConnectTimeout time.Duration
	// MaxDescription bounds tool descriptions (see Convert).
	MaxDescription int
}

// Client keeps one connection to one MCP server, reconnecting with backoff,
// and hands the server's tools to Options.OnChange. Its tools call the
// server through whichever connection is current: a call while the server
// is down is an error result naming the server as unavailable. Build with
// NewClient, then Run.
type Client struct {
	name string
	opts Options
	log  *slog.Logger

	sess    atomic.Pointer[session]
	changed chan struct{}

	mu    sync.Mutex
	state State
}

// session is one live connection, what it was resolved from and the
// redactor of its secrets.
type session struct {
	cs  *sdk.ClientSession
	srv Server
	red *Redactor
}

// NewClient returns a client for the server configured under name; the
// name is the one Resolve's Server must carry.
func NewClient(name string, opts Options) (*Client, error) {
	if !serverName.MatchString(name) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidServer, name)
	}
	if opts.Resolve == nil {
		return nil, fmt.Errorf("%w: %s: no Resolve", ErrInvalidServer, name)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	switch {
	case opts.KeepAlive == 0:
		opts.KeepAlive = 30 * time.Second
	case opts.KeepAlive < 0:
		opts.KeepAlive = 0
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 30 * time.Second
	}
	c := &Client{name: name, opts: opts, log: opts.Logger.With("server", name), changed: make(chan struct{}, 1)}
	c.state = State{Server: name, Phase: Connecting}
	return c, nil
}

// String names the client's server; nothing resolved is printed.
func (c *Client) String() string { return "mcp client " + c.name }

// Name returns the server's configured name.
func (c *Client) Name() string { return c.name }

// Run connects and keeps the connection until ctx ends, then closes it (a
// stdio server's process is stopped) and returns ctx's error.
func (c *Client) Run(ctx context.Context) error {
	attempt := 0
	notifiedDown := false
	for {
		c.setPhase(Connecting, nil)
		s, err := c.open(ctx)
		if err == nil {
			attempt, notifiedDown = 0, false
			err = c.serve(ctx, s)
		}
		if ctx.Err() != nil {
			c.setPhase(Down, ctx.Err())
			return ctx.Err()
		}
		c.log.Warn("mcp: server unavailable", "err", err)
		c.setPhase(Down, err)
		if !notifiedDown {
			notifiedDown = true
			c.notify(ctx, ToolSet{Server: c.name, Phase: Down, Err: err})
		}
		if !backoff.Sleep(ctx, c.backoff(attempt)) {
			c.setPhase(Down, ctx.Err())
			return ctx.Err()
		}
		attempt++
	}
}

// open resolves the server and connects to it.
func (c *Client) open(ctx context.Context) (*session, error) {
	cctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout)
	defer cancel()
	srv, err := c.opts.Resolve(cctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if srv.Name != c.name {
		return nil, fmt.Errorf("%w: resolved %q for %q", ErrInvalidServer, srv.Name, c.name)
	}
	if err := srv.Validate(); err != nil {
		return nil, err
	}
	red := srv.Redactor()
	if n := red.Short(); n > 0 {
		c.log.Warn("mcp: secrets shorter than 4 bytes are not redacted from what the server returns or prints", "count", n)
	}
	cs, err := connect(cctx, srv, red, c.log, c.opts.KeepAlive, c.listChanged)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, red.Redact(err.Error()))
	}
	return &session{cs: cs, srv: srv, red: red}, nil
}

// serve lists the tools, hands them over and follows the connection until it
// ends; the error says why it ended.
func (c *Client) serve(ctx context.Context, s *session) error {
	defer func() {
		c.sess.CompareAndSwap(s, nil)
		_ = s.cs.Close()
	}()
	done := make(chan error, 1)
	go func() { done <- s.cs.Wait() }()
	c.drainChanged()
	if err := c.list(ctx, s); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			if err == nil {
				err = errors.New("connection closed")
			}
			return fmt.Errorf("%w: %s", ErrUnavailable, s.red.Redact(err.Error()))
		case <-c.changed:
			if err := c.list(ctx, s); err != nil {
				return err
			}
		}
	}
}

// list lists the server's tools, installs s as the current connection and
// hands the new set over.
func (c *Client) list(ctx context.Context, s *session) error {
	lctx, cancel := context.WithTimeout(ctx, c.opts.ConnectTimeout)
	defer cancel()
	var tools []*sdk.Tool
	for t, err := range s.cs.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("%w: listing tools: %s", ErrUnavailable, s.red.Redact(err.Error()))
		}
		tools = append(tools, t)
	}
	set, err := c.toolSet(s, tools)
	if err != nil {
		return err
	}
	warnSkipped(c.log, set.Skipped)
	c.sess.Store(s)
	c.mu.Lock()
	c.state = State{Server: c.name, Phase: Ready, Since: time.Now(), Tools: set.Descriptors(), Skipped: set.Skipped, Scope: set.Scope}
	c.mu.Unlock()
	c.notify(ctx, set)
	return nil
}

// listChanged is the SDK's tools/list_changed callback: it must not block.
func (c *Client) listChanged() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *Client) drainChanged() {
	select {
	case <-c.changed:
	default:
	}
}

func (c *Client) notify(ctx context.Context, set ToolSet) {
	if c.opts.OnChange != nil {
		c.opts.OnChange(ctx, set)
	}
}

// backoff is the wait before attempt+1: MinBackoff doubled attempt times,
// capped at MaxBackoff, drawn from [d/2, d].
func (c *Client) backoff(attempt int) time.Duration {
	return backoff.Delay(c.opts.MinBackoff, c.opts.MaxBackoff, attempt+1)
}
