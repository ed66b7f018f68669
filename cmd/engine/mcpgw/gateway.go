package mcpgw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
)

// DefaultWait is how long a call that asks waits for its answer before the
// model is told the ticket instead.
const DefaultWait = 10 * time.Minute

// DefaultProgressEvery is how often a waiting call sends a progress
// notification (when the client gave a progress token).
const DefaultProgressEvery = 5 * time.Second

// Config is what a gateway needs: the engine to talk to and the run's
// parameters.
type Config struct {
	// API is the engine: the service's client (--nats) or an in-process
	// engine (--data).
	API sgclient.API
	// Agent, Location and Project start the run as start_run takes them.
	Agent, Location, Project string
	// Session names the session: its runs' ids derive from it (see RunID).
	Session string
	// Wait bounds how long one call waits for a human; 0 is DefaultWait.
	Wait time.Duration
	// ProgressEvery is how often a waiting call reports progress; 0 is
	// DefaultProgressEvery.
	ProgressEvery time.Duration
	// Elicit lets the MCP client's user answer tickets through elicitation,
	// where the client declares the capability.
	Elicit bool
	// Version is the server's version in its MCP implementation info.
	Version string
	// Logger gets the gateway's warnings; nil discards them.
	Logger *slog.Logger
}

// Gateway is one session's run served as MCP tools. Safe for concurrent
// use; its steps are submitted one at a time.
type Gateway struct {
	cfg    Config
	api    sgclient.API
	log    *slog.Logger
	run    string
	server *mcp.Server

	// slot is held by the call whose step is being submitted or awaited:
	// a run's steps are sequential, so MCP calls queue here in turn. A
	// repeat of the open step's call does not queue: it joins that step
	// (see [Gateway.take]).
	slot chan struct{}
	// mu guards next, open, ended and opened; only the slot's holder sets
	// next and open to a new step.
	mu     sync.Mutex
	next   int           // the step number the next new call takes
	open   *open         // the run's step that is not final, nil when none
	ended  bool          // the run has ended (a human declined it)
	opened chan struct{} // closed (and replaced) when open is set: queued calls look again

	toolsMu sync.Mutex
	listed  map[string]string // tool name → digest of what was listed
}

// open is the run's step that is not final: its one call and its tickets.
type open struct {
	step    int
	call    sgclient.CallRequest
	tickets []sgclient.TicketView
}

// repeats reports whether call is a repeat of the open step's call: the
// same tool with the same arguments as JSON values (see [sameArgs]).
func (o *open) repeats(call sgclient.CallRequest) bool {
	return o.call.Tool == call.Tool && sameArgs(o.call.Args, call.Args)
}

// New starts (or finds again) the session's run and returns its gateway
// with the run's catalogue as its tool list.
func New(ctx context.Context, cfg Config) (*Gateway, error) {
	if cfg.API == nil {
		return nil, errors.New("mcp gateway: no engine")
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	if cfg.Agent == "" {
		cfg.Agent = "build"
	}
	if cfg.Session == "" {
		cfg.Session = "default"
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	info, err := startSession(ctx, cfg.API, &cfg)
	if err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, api: cfg.API, log: log, run: info.Run, slot: make(chan struct{}, 1), opened: make(chan struct{}), listed: map[string]string{}}
	if err := g.resync(ctx); err != nil {
		return nil, err
	}
	version := cfg.Version
	if version == "" {
		version = "0.0.0-dev"
	}
	g.server = mcp.NewServer(&mcp.Implementation{Name: "stepgate", Title: "Stepgate", Version: version},
		&mcp.ServerOptions{Logger: log, Instructions: "Every tool call goes through Stepgate's gate and is logged to run " + g.run +
			". A call that needs a human's approval waits for it; when the wait ends first, the result names the ticket, " +
			"and calling the same tool again with the same arguments waits for that ticket again."})
	g.server.AddReceivingMiddleware(g.relist)
	g.syncTools(info.Catalog)
	log.Info("MCP session", "session", cfg.Session, "run", g.run, "next_step", g.next)
	return g, nil
}

// Run is the session's run id.
func (g *Gateway) Run() string { return g.run }

// Server is the MCP server to connect transports to.
func (g *Gateway) Server() *mcp.Server { return g.server }

// resync reads the run back from the engine: the next step's number and
// the step that is not final (awaiting a ticket), if any. Called with the
// slot held, or before the gateway serves.
func (g *Gateway) resync(ctx context.Context) error {
	r, err := g.api.Show(ctx, sgclient.ShowRequest{Run: g.run})
	if err != nil {
		return fmt.Errorf("read run %s: %w", g.run, err)
	}
	var o *open
	if n := len(r.Steps); n > 0 && !r.Steps[n-1].Final && len(r.Steps[n-1].Calls) > 0 {
		s := r.Steps[n-1]
		c := s.Calls[0]
		o = &open{step: s.N, call: sgclient.CallRequest{ID: c.ID, Tool: c.Tool, Args: c.Args}}
		for _, t := range r.Tickets {
			if t.Step == s.N && t.Resolution == nil {
				o.tickets = append(o.tickets, sgclient.TicketView{TicketIssued: t.TicketIssued, Run: g.run, Step: s.N, Args: c.Args})
			}
		}
		o.tickets = g.views(ctx, o.tickets, c.Args)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ended = r.Status == sgclient.StatusEnded
	g.next = len(r.Steps) + 1
	g.setOpen(o)
	return nil
}

// setOpen makes o the open step (nil: none) and wakes the calls queued
// for the slot, so that a repeat of o's call joins it. Called with mu
// held.
func (g *Gateway) setOpen(o *open) {
	g.open = o
	if o != nil {
		close(g.opened)
		g.opened = make(chan struct{})
	}
}

// settled is the end of step o, seen by one of its waiters: o is no
// longer open (unless another step is already), and the run has ended
// when ended. A call that arrives afterwards is a new call.
func (g *Gateway) settled(o *open, ended bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == o {
		g.open = nil
	}
	g.ended = g.ended || ended
}

// state is the open step and whether the run has ended, as this gateway
// last saw them.
func (g *Gateway) state() (*open, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open, g.ended
}

// take is how call gets its turn: the open step it repeats, to wait on
// without the slot (joined), or the slot (joined nil). A call queued
// for the slot looks again each time a step opens, so a repeat that
// arrived while its original was being submitted joins it too. It gives
// up when ctx ends first.
func (g *Gateway) take(ctx context.Context, call sgclient.CallRequest) (joined *open, err error) {
	for {
		g.mu.Lock()
		o, opened := g.open, g.opened
		g.mu.Unlock()
		if o != nil && o.repeats(call) {
			return o, nil
		}
		select {
		case g.slot <- struct{}{}:
			return nil, nil
		case <-opened:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (g *Gateway) release() { <-g.slot }
