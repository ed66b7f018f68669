package commands

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"go.opentelemetry.io/otel/trace"
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
	// MCP configures the connections to the MCP servers runs' policies
	// declare (Policy.MCPServers).
	MCP MCPOptions
	// Tracer, when set, traces every tool call (an execute_tool span),
	// every commit to a run and every wait on a human (see tracing.go);
	// nil for none, which costs nothing on the step path. The global
	// OpenTelemetry provider is never used.
	Tracer trace.TracerProvider
	// TraceContent records the calls' arguments and results on their
	// spans; off by default.
	TraceContent bool
	// Locations are the directories this host holds (doublestar globs of
	// clean absolute paths, see CheckLocations): its runs may start, and
	// their calls run, only in those. None: whatever exists on this host's
	// filesystem, as a host alone has it.
	Locations []string
	// Forward carries a request that needs a location this host does not
	// hold to a host that does (see Forwarder); nil: such a request is
	// answered ErrNoExecutor.
	Forward Forwarder
	// Sandbox is the host's floor (serve --sandbox): every run it starts
	// runs its commands at least this contained, whatever the
	// configuration says (config.SandboxProfile.Tighten). Zero: off, the
	// configuration's profile alone.
	Sandbox config.SandboxProfile
	// SandboxDenied are this host's own secrets, denied to every
	// sandboxed command besides the profile's: its data directory, the
	// user's and the secrets file, the NATS credentials it connects with.
	SandboxDenied []string
	// Pause, when set, is called at named points of a step: a test stops
	// the process there, or holds the host while another acts. It returns
	// when the host may go on. The points: turn-landed (a step's turn is in
	// the log and nothing of the step is), decided (a step's decide commit
	// is in the log and nothing has run) and reply-waits (a reply found
	// another call of its step in flight and waits for its result).
	Pause func(ctx context.Context, point string)
}

// Policy is the configuration's word on a run: the agent's rules with their
// sources, and tool-output limits (zero fields: the engine's).
type Policy struct {
	Rules  gate.Ruleset
	Limits events.OutputLimits
	// TicketTTL is how long the agent's confirmations wait; 0 for as long
	// as it takes. A run may ask for less, never more.
	TicketTTL time.Duration
	// MCPServers are the location's MCP servers, secret references
	// unresolved: a run sees the tools of the enabled ones (narrowed by
	// deny_all and allow), and the host connects to them.
	MCPServers []config.MCPServer
	// Version is the fleet configuration document's version the policy
	// came from (pinned in RunStarted.ConfigVersion); 0 for a local file.
	Version uint64
	// Sandbox is the profile the agent's commands run under (before the
	// host's floor, Config.Sandbox); zero: off.
	Sandbox config.SandboxProfile
}

// Engine handles commands against one log. All methods are safe for
// concurrent use; several Engines (hosts) may share one log, and the log's
// optimistic concurrency decides between them.
//
// Each command belongs to one handler, which holds what that capability
// needs beside the [base] every handler shares (the log, the read model,
// the configuration, the run locks and the output store): runs (start,
// catalogue, end, list, show), submitter (a step), awaiter (waiting for a
// step), replier (tickets, replies and the ticket sweep), registrar (the
// registry), approvals (saved grants), outputs (the output sweep) and
// recovery (what a host left in doubt). Engine's methods (api_engine.go)
// say which handler answers.
type Engine struct {
	*base
	runs      *runs
	submitter *submitter
	awaiter   *awaiter
	replier   *replier
	registrar *registrar
	approvals *approvals
	outputs   *outputs
	recovery  *recovery
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
		cfg.Limits.MaxLines = config.DefaultMaxLines
	}
	if cfg.Limits.MaxBytes == 0 {
		cfg.Limits.MaxBytes = config.DefaultMaxBytes
	}
	if err := CheckLocations(cfg.Locations); err != nil {
		return nil, fmt.Errorf("commands: %w", err)
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
	b := &base{log: log, proj: proj, cfg: cfg, store: store, floor: resultFloor(store), tr: newTracer(cfg),
		fleet: newFleet(cfg.Host, cfg.Locations, cfg.Forward)}
	reg := &registrar{base: b, tools: tools}
	reg.mcp = newMCPHosts(reg, cfg.MCP, cfg.Logger)
	grants := &approvals{base: b}
	steps := &submitter{base: b, reg: reg, grants: grants, execs: make(chan struct{}, cfg.MaxExecutions),
		sandboxes: sandbox.NewPool()}
	return &Engine{
		base:      b,
		runs:      &runs{base: b, reg: reg},
		submitter: steps,
		awaiter:   &awaiter{base: b, waits: newStepWaits()},
		replier:   &replier{base: b, reg: reg, grants: grants, steps: steps},
		registrar: reg,
		approvals: grants,
		outputs:   &outputs{base: b},
		recovery:  &recovery{base: b, reg: reg, steps: steps},
	}, nil
}
