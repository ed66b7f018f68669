package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor/mcp"
)

// MCPOptions configure the host's connections to the MCP servers that runs'
// configurations declare (see [Policy.MCPServers]).
type MCPOptions struct {
	// Off starts no MCP server: runs see no MCP server's tool this host
	// would register.
	Off bool
	// Secrets returns the resolver of secret references, called at each
	// connection attempt; default the environment only.
	Secrets func() (*config.Secrets, error)
	// StartWait bounds how long StartRun waits for the first listing of the
	// run's servers; default 5s. A server that is not listed by then is
	// logged and absent from the first catalogue; the run starts.
	StartWait time.Duration
	// CallWait bounds how long a call of a server this host has no
	// connection to (a ticket resumed after a restart, a call of a run
	// another host started) waits for one; default 10s.
	CallWait time.Duration
	// MinBackoff, MaxBackoff and KeepAlive tune the clients (see
	// mcp.Options); zero: its defaults.
	MinBackoff, MaxBackoff, KeepAlive time.Duration
}

// mcpHosts keeps one supervisor (an mcp.Client) per server name, started
// when a run whose configuration declares the server starts (or a call needs
// it), and replaced when a later configuration reaches the server otherwise.
// Each tool set a supervisor reports is registered in the location layer
// under its content-addressed scope and installed on this host.
type mcpHosts struct {
	reg  *registrar
	opts MCPOptions
	log  *slog.Logger

	ctx  context.Context // the supervisors' lifetime
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	sups   map[string]*mcpSupervisor // by server name
	closed bool

	changeMu sync.Mutex        // one tool set handled at a time
	scopes   map[string]string // server → the scope this host registered last
}

// mcpSupervisor is one server's client and what it was started from.
type mcpSupervisor struct {
	key    string // the server's name, transport and directory, references unresolved
	cfg    config.MCPServer
	client *mcp.Client
	cancel context.CancelFunc
	listed chan struct{} // closed once the first tool set (or failure) was handled
	ready  chan struct{} // closed once a tool set was registered and installed
	once   sync.Once
	ready1 sync.Once
	// retry is the last tool set when registering it failed (the log was
	// unreachable): the next run start or call that needs the server
	// registers it again. Guarded by mcpHosts.changeMu.
	retry *mcp.ToolSet
}

func newMCPHosts(reg *registrar, opts MCPOptions, log *slog.Logger) *mcpHosts {
	if opts.StartWait <= 0 {
		opts.StartWait = 5 * time.Second
	}
	if opts.CallWait <= 0 {
		opts.CallWait = 10 * time.Second
	}
	if opts.Secrets == nil {
		opts.Secrets = func() (*config.Secrets, error) { return &config.Secrets{}, nil }
	}
	ctx, stop := context.WithCancel(context.Background())
	return &mcpHosts{reg: reg, opts: opts, log: log, ctx: ctx, stop: stop,
		sups: map[string]*mcpSupervisor{}, scopes: map[string]string{}}
}

// supervisorKey identifies how a server is reached: its name, transport,
// environment and headers as written (references unresolved), trust,
// working directory and sandbox.
func supervisorKey(s config.MCPServer, dir string) string {
	b, _ := json.Marshal(struct {
		Name    string                `json:"name"`
		Command []string              `json:"command"`
		Env     map[string]string     `json:"env"`
		URL     string                `json:"url"`
		Headers map[string]string     `json:"headers"`
		Trust   bool                  `json:"trust"`
		Dir     string                `json:"dir"`
		Sandbox config.SandboxProfile `json:"sandbox"`
	}{s.Name, s.Command, s.Env, s.URL, s.Headers, s.Trust, dir, s.Sandbox})
	return string(b)
}

// ensure returns the running supervisors of servers' enabled entries,
// starting those this host lacks or whose configuration changed. location
// is the run's: a server its project file declares runs there.
func (m *mcpHosts) ensure(servers []config.MCPServer, location string) []*mcpSupervisor {
	if m.opts.Off {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	var out []*mcpSupervisor
	for _, srv := range servers {
		if !srv.Enabled {
			continue
		}
		dir := ""
		if location != "" && srv.Source == config.ProjectFile(location) {
			dir = location
		}
		key := supervisorKey(srv, dir)
		if s := m.sups[srv.Name]; s != nil && s.key == key {
			out = append(out, s)
			continue
		} else if s != nil {
			m.log.Info("mcp: server configuration changed, reconnecting", "server", srv.Name)
			s.cancel()
		}
		s, err := m.start(srv, dir, key)
		if err != nil {
			m.log.Warn("mcp: server not started", "server", srv.Name, "err", err)
			continue
		}
		m.sups[srv.Name] = s
		out = append(out, s)
	}
	return out
}

// start builds and runs a supervisor; m.mu is held.
func (m *mcpHosts) start(srv config.MCPServer, dir, key string) (*mcpSupervisor, error) {
	s := &mcpSupervisor{key: key, cfg: srv, listed: make(chan struct{}), ready: make(chan struct{})}
	c, err := mcp.NewClient(srv.Name, mcp.Options{
		Resolve:    func(ctx context.Context) (mcp.Server, error) { return m.resolve(ctx, srv, dir) },
		OnChange:   func(ctx context.Context, set mcp.ToolSet) { m.changed(ctx, s, set) },
		Logger:     m.log,
		MinBackoff: m.opts.MinBackoff, MaxBackoff: m.opts.MaxBackoff, KeepAlive: m.opts.KeepAlive,
		ConnectTimeout: m.opts.CallWait,
	})
	if err != nil {
		return nil, err
	}
	s.client = c
	ctx, cancel := context.WithCancel(m.ctx)
	s.cancel = cancel
	m.wg.Go(func() { _ = c.Run(ctx) })
	return s, nil
}

// resolve is the server as it is connected now: its secrets resolved at
// this moment, into a value that lives in the connection only.
func (m *mcpHosts) resolve(ctx context.Context, srv config.MCPServer, dir string) (mcp.Server, error) {
	secrets, err := m.opts.Secrets()
	if err != nil {
		return mcp.Server{}, fmt.Errorf("MCP server %s: secrets: %w", srv.Name, err)
	}
	rs, err := secrets.ResolveServer(ctx, srv)
	if err != nil {
		return mcp.Server{}, err
	}
	out := mcp.Server{Name: srv.Name, Command: srv.Command, Env: rs.Env(), Dir: dir,
		URL: srv.URL, Headers: rs.Headers(), Secrets: rs.Secrets(), Trust: srv.Trust}
	if srv.Sandbox.Sandboxed() && srv.URL == "" {
		// The server's location is where it runs: the run's location for
		// a server its project declares; for one the user's file declares
		// (one process serves every run) this host's working directory,
		// kept read-only: it writes only its writable roots and its
		// temporary directory.
		loc, shared := dir, dir == ""
		if shared {
			if loc, err = os.Getwd(); err != nil {
				return mcp.Server{}, fmt.Errorf("MCP server %s: the sandbox's location: %w", srv.Name, err)
			}
		}
		out.Sandbox = m.reg.policyFor(srv.Sandbox, loc)
		if shared {
			out.Sandbox.ReadOnly = append(out.Sandbox.ReadOnly, loc)
		}
	}
	return out, nil
}

// changed handles a tool set a supervisor reports. Ready: the set is
// registered under its scope (unless the registry holds it already, as
// after a restart or on a second host), installed here, and every other
// scope of the server is closed, so calls advertised from it settle stale.
// Down: nothing changes in the registry; the installed tools answer that
// the server is unavailable until it is back.
func (m *mcpHosts) changed(ctx context.Context, s *mcpSupervisor, set mcp.ToolSet) {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	defer s.once.Do(func() { close(s.listed) })
	m.mu.Lock()
	current := m.sups[set.Server] == s
	m.mu.Unlock()
	if !current || set.Phase != mcp.Ready {
		return
	}
	s.retry = nil
	scope := m.openScope(set.Scope)
	descs := set.Descriptors()
	m.reg.Install(scope, set.Tools...) // harmless until registered; callable here if another host registered it
	if len(descs) > 0 && !m.registered(scope, set) {
		if _, err := m.reg.RegisterTools(ctx, RegisterRequest{Scope: scope, Tools: descs}); err != nil {
			m.log.Warn("mcp: registering the server's tools; retried at the next run start or call", "server", set.Server, "scope", scope, "err", err)
			s.retry = &set
			return
		}
	}
	for _, old := range m.otherScopes(set.Server, scope) {
		if _, err := m.reg.CloseScope(ctx, CloseScopeRequest{Scope: old}); err != nil {
			m.log.Warn("mcp: closing the server's previous scope", "server", set.Server, "scope", old, "err", err)
		}
	}
	m.scopes[set.Server] = scope
	s.ready1.Do(func() { close(s.ready) })
	m.log.Info("mcp: server ready", "server", set.Server, "scope", scope, "tools", len(descs), "skipped", len(set.Skipped))
}

// retryFailed registers again the tool sets whose registration failed.
func (m *mcpHosts) retryFailed(ctx context.Context, sups []*mcpSupervisor) {
	for _, s := range sups {
		m.changeMu.Lock()
		set := s.retry
		m.changeMu.Unlock()
		if set != nil {
			m.changed(ctx, s, *set)
		}
	}
}

// wait waits until each supervisor's channel (of) is closed, for d at
// most; it returns the supervisors whose channel was not.
func wait(ctx context.Context, sups []*mcpSupervisor, of func(*mcpSupervisor) chan struct{}, d time.Duration) []*mcpSupervisor {
	t := time.NewTimer(d)
	defer t.Stop()
	for i, s := range sups {
		select {
		case <-of(s):
			continue
		case <-t.C:
		case <-ctx.Done():
		}
		var late []*mcpSupervisor
		for _, s := range sups[i:] {
			select {
			case <-of(s):
			default:
				late = append(late, s)
			}
		}
		return late
	}
	return nil
}

// forRun starts (or keeps) the servers a run's configuration declares and
// waits, StartWait at most, for their first listing, so that the run's
// first catalogue has their tools. A server that does not come up is logged.
func (m *mcpHosts) forRun(ctx context.Context, servers []config.MCPServer, location string) {
	sups := m.ensure(servers, location)
	m.retryFailed(ctx, sups)
	for _, s := range wait(ctx, sups, func(s *mcpSupervisor) chan struct{} { return s.listed }, m.opts.StartWait) {
		st := s.client.State()
		m.log.Warn("mcp: server not ready at run start; its tools are absent", "server", st.Server, "phase", st.Phase, "err", st.LastError)
	}
}

// close stops every supervisor (a stdio server's process is stopped) and
// waits for them.
func (m *mcpHosts) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.stop()
	m.wg.Wait()
}
