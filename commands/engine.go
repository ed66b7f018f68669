package commands

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// Config configures an [Engine]. The zero value is usable except for the
// fields marked required.
type Config struct {
	// Host names this host in its commits; default the OS host name.
	Host string
	// Version is the engine version pinned in every RunStarted.
	Version string
	// ToolOutputDir is where spilled tool output lives (allowed for
	// external_directory by the build agent's defaults); default
	// stepgate-tool-output in the system temporary directory.
	ToolOutputDir string
	// Limits are the tool-output bounds pinned for new runs; zero fields take
	// the defaults (2000 lines, 51200 bytes).
	Limits events.OutputLimits
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
	// IDs issues ULIDs; default a crypto/rand source.
	IDs *events.IDSource
	// Logger receives best-effort warnings; default slog.Default().
	Logger *slog.Logger
	// MaxCalls bounds the calls of one step; a step with more is
	// invalid_input. Default DefaultMaxCalls (128).
	MaxCalls int
	// MaxExecutions bounds the tool calls this host runs at once, over all
	// runs; the others queue (honouring their ctx). Default
	// DefaultMaxExecutions(): 4×GOMAXPROCS, at least 64.
	MaxExecutions int
	// Policy resolves what the configuration says for agent in location as
	// it is now: pinned at a run's start, and consulted again when an
	// approved call resumes (a deny in either blocks it). Default: the
	// built-in agents and the location's project file (config.Loader).
	// The rules carry the protected paths as protections
	// (gate.SourceProtected), as config.Loader resolves them; a Policy
	// that leaves them out protects no path.
	Policy func(agent, location string) Policy
	// Metrics observes commits, verdicts, tool runs and resumes; default
	// none.
	Metrics Metrics
}

// Policy is the configuration's word on a run: the agent's rules with their
// sources, and tool-output limits (zero fields: the engine's).
type Policy struct {
	Rules  gate.Ruleset
	Limits events.OutputLimits
	// TicketTTL is how long the agent's confirmations wait; 0 for as long
	// as it takes. A run may ask for less, never more.
	TicketTTL time.Duration
}

// Engine handles commands against one log. All methods are safe for
// concurrent use; several Engines (hosts) may share one log, and the log's
// optimistic concurrency decides between them.
type Engine struct {
	log   *step.Log
	proj  *projection.Projector
	tools *executor.Registry
	cfg   Config

	store      *executor.OutputStore // the one output boundary
	locks      runLocks              // one committer per run per host
	configs    sync.Map              // run id → *runConfig
	shared     sharedConfig          // what runs' configurations share
	installed  sync.Map              // location-layer identity → *executor.Tool
	installVer atomic.Uint64         // bumped at every Install
	grantRules sync.Map              // project → *grantsCache
	regCache   atomic.Pointer[registryCache]
	waits      *stepWaits    // AwaitStep's waiters, answered by one watcher
	execs      chan struct{} // the host's execution slots
	lease      *hostLease    // nil: no lease (see StartHost)
	floor      int           // resultFloor of the output store
}

// DefaultMaxCalls is the default bound on the calls of one step.
const DefaultMaxCalls = 128

// DefaultMaxExecutions is the default bound on the tool calls a host runs
// at once: 4×GOMAXPROCS, at least 64.
func DefaultMaxExecutions() int { return max(64, 4*runtime.GOMAXPROCS(0)) }

// New returns an engine. The projector must be following the same log (see
// projection.Projector.Follow) for other hosts' commits to become visible.
func New(log *step.Log, proj *projection.Projector, tools *executor.Registry, cfg Config) (*Engine, error) {
	if log == nil || proj == nil || tools == nil {
		return nil, fmt.Errorf("commands: log, projector and tools are required: %w", ErrInvalidRequest)
	}
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Limits.MaxLines == 0 {
		cfg.Limits.MaxLines = 2000
	}
	if cfg.Limits.MaxBytes == 0 {
		cfg.Limits.MaxBytes = 51200
	}
	if cfg.MaxCalls < 0 || cfg.MaxExecutions < 0 {
		return nil, fmt.Errorf("commands: max calls %d, max executions %d: must not be negative: %w", cfg.MaxCalls, cfg.MaxExecutions, ErrInvalidRequest)
	}
	if cfg.MaxCalls == 0 {
		cfg.MaxCalls = DefaultMaxCalls
	}
	if cfg.MaxExecutions == 0 {
		cfg.MaxExecutions = DefaultMaxExecutions()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.IDs == nil {
		cfg.IDs = events.NewIDSource(nil)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	if cfg.ToolOutputDir == "" {
		cfg.ToolOutputDir = filepath.Join(os.TempDir(), "stepgate-tool-output")
	}
	if cfg.Policy == nil {
		cfg.Policy = LoaderPolicy(config.Loader{ToolOutputDir: cfg.ToolOutputDir}, cfg.Logger)
	}
	store := executor.NewOutputStore(cfg.ToolOutputDir, cfg.Clock, func() string { return cfg.IDs.New(cfg.Clock()) })
	return &Engine{log: log, proj: proj, tools: tools, cfg: cfg, store: store, waits: newStepWaits(),
		execs: make(chan struct{}, cfg.MaxExecutions), floor: resultFloor(store)}, nil
}

// lockRun serialises this host's commits to one run.
func (e *Engine) lockRun(run string) *runLock {
	return e.locks.lock(run)
}

// commit appends c to its run with expectation last and folds it into the
// projection at once (read-your-writes). A run commit names the run's last
// commit as its predecessor (the run's hash chain, see chain.go); a run that
// diverged takes no commit. While NATS is unavailable the same commit is
// tried again (see commitThrough).
func (e *Engine) commit(ctx context.Context, c *events.Commit, last uint64) (uint64, error) {
	if err := e.chain(c); err != nil {
		return 0, err
	}
	seq, err := e.commitThrough(ctx, c, last)
	e.observeCommit(c, err)
	if err != nil {
		return 0, err
	}
	if err := e.proj.ApplyOwn(seq, c); err != nil {
		return 0, fmt.Errorf("fold own commit %s at %d: %w", c.ID, seq, err)
	}
	return seq, nil
}

// refresh folds the run's commits this host has not seen yet (after losing a
// commit race); see syncRun.
func (e *Engine) refresh(ctx context.Context, run string, after uint64) error {
	if err := e.syncRun(ctx, run, after); err != nil {
		return fmt.Errorf("refresh run %s: %w", run, err)
	}
	return nil
}

// newCommit builds an envelope for run.
func (e *Engine) newCommit(run string, n int, kind events.Kind, evs ...events.Event) *events.Commit {
	c := e.commitOf(run, n, kind, evs)
	return &c
}

// commitOf is newCommit as a value, for callers that hold it themselves.
func (e *Engine) commitOf(run string, n int, kind events.Kind, evs []events.Event) events.Commit {
	now := e.cfg.Clock()
	return events.Commit{ID: e.cfg.IDs.New(now), Run: run, Step: n, Kind: kind, At: now.UTC(), Host: e.cfg.Host, Events: evs}
}

// grantsCache is the saved approvals of one project as of a grants version.
type grantsCache struct {
	ver   uint64
	rules gate.Ruleset
}

// saved returns a project's approvals in force as allow rules, rebuilt only
// when grants changed. It calls the projector: never from inside a view.
func (e *Engine) saved(project string) gate.Ruleset {
	ver := e.proj.GrantsVersion()
	if v, ok := e.grantRules.Load(project); ok {
		if c := v.(*grantsCache); c.ver == ver {
			return c.rules
		}
	}
	rules := savedRules(project, e.proj.Grants(project))
	e.grantRules.Store(project, &grantsCache{ver: ver, rules: rules})
	return rules
}

// savedRules turns the grants of project among grants into allow rules.
func savedRules(project string, grants []projection.Grant) gate.Ruleset {
	var rs gate.Ruleset
	for _, g := range grants {
		if g.Project == project {
			rs = append(rs, gate.Rule{Action: g.Action, Resource: g.Resource, Effect: gate.Allow, Source: gate.SourceSaved})
		}
	}
	return rs
}

// LoaderPolicy resolves policies from configuration files. A configuration
// that cannot be read, or an agent no layer defines, resolves to deny-all
// (and is logged): never ask, never allow.
func LoaderPolicy(l config.Loader, log *slog.Logger) func(agent, location string) Policy {
	return func(agent, location string) Policy {
		eff, err := l.Effective(agent, location)
		if err != nil {
			log.Warn("configuration: the agent is denied everything", "agent", agent, "location", location, "err", err)
		}
		return Policy{Rules: eff.Rules, Limits: events.OutputLimits{MaxLines: eff.MaxLines, MaxBytes: eff.MaxBytes}, TicketTTL: eff.TicketTTL}
	}
}
