package commands

import (
	"github.com/stepgate/stepgate/executor/sandbox"
	"sync"
	"sync/atomic"

	"github.com/stepgate/stepgate/executor"
)

// runs starts, forks, lists, shows and ends runs, and advertises their
// catalogues.
type runs struct {
	*base
	reg *registrar
}

// submitter decides, executes and commits steps, and settles the calls of
// a step that another handler resumes (an approval, a recovery).
type submitter struct {
	*base
	reg    *registrar
	grants *approvals
	execs  chan struct{} // the host's execution slots
	// sandboxes are the warm sandbox helpers of this host's contained
	// calls (one per run's policy and location); closed when the host
	// stops (StopSandboxes).
	sandboxes *sandbox.Pool
}

// awaiter answers AwaitStep: waiters by step, answered by one watcher.
type awaiter struct {
	*base
	waits *stepWaits
}

// replier lists tickets, takes replies to them and settles the expired and
// stale ones.
type replier struct {
	*base
	reg    *registrar
	grants *approvals
	steps  *submitter
}

// registrar keeps the tool registry: registrations committed to the log,
// the implementations installed on this host, and the effective registry
// built from both.
type registrar struct {
	*base
	tools      *executor.Registry
	installed  sync.Map      // location-layer identity → *executor.Tool
	installVer atomic.Uint64 // bumped at every Install
	regCache   atomic.Pointer[registryCache]
	mcp        *mcpHosts // this host's connections to MCP servers
}

// approvals keeps the saved approvals (grants) of projects.
type approvals struct {
	*base
	grantRules sync.Map // project → *grantsCache
}

// outputs deletes expired output files.
type outputs struct {
	*base
}

// recovery settles what a host left in doubt: this host's at start, another
// host's on request or after its lease lapsed.
type recovery struct {
	*base
	reg   *registrar
	steps *submitter
}
