package commands

import (
	"context"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
)

// The commands of an Engine, each answered by one handler (see Engine).

// — runs —

// StartRun starts a run and pins its snapshot: the agent's resolved ruleset
// with sources, the run's overrides, narrowing, output limits and the engine
// version. The start commit also records the first advertised catalogue.
//
// With a client-chosen run id (req.Run) it is idempotent: a start of a run
// that exists with the same agent, location, project, overrides and
// narrowing (a retry after a lost answer) returns that run and the tools
// visible to it now; with anything else, [ErrConflict].
func (e *Engine) StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error) {
	return e.runs.StartRun(ctx, req)
}

// Materialize returns the tools visible to the run now. When the catalogue
// differs from the one the run last advertised (a tool was replaced), the new
// identities are committed before they are returned, so every host checks
// later calls against what the model was shown.
func (e *Engine) Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	return e.runs.Materialize(ctx, req)
}

// RecordTurn commits one model turn of a run a model drives (see
// events.ModelTurnRecorded): turn n of a run whose turns so far all had
// calls and whose steps are those turns', the last final. A turn the run
// has already, the same, is answered Again with nothing committed; another
// turn of that number is [ErrConflict]; a number that is not the next, or
// a turn while the previous turn's step is not submitted or not final, is
// [ErrStepOrder]; an ended run is [ErrRunNotActive].
func (e *Engine) RecordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error) {
	return e.runs.RecordTurn(ctx, req)
}

// EndRun ends a run with a cause (default completed). Ended absorbs: a second
// EndRun, like any later command on the run, gets [ErrRunNotActive].
func (e *Engine) EndRun(ctx context.Context, req EndRunRequest) (*RunSummary, error) {
	return e.runs.EndRun(ctx, req)
}

// Runs lists the runs this host's projection knows, oldest first.
func (e *Engine) Runs(ctx context.Context) ([]RunSummary, error) {
	return e.runs.Runs(ctx)
}

// Show returns one run in full: every step, every call with its verdict, the
// rule that decided, and its result.
func (e *Engine) Show(ctx context.Context, req ShowRequest) (*projection.Run, error) {
	return e.runs.Show(ctx, req)
}

// Fork starts a new run whose first req.At steps are the source run's,
// copied from the log: one commit per step carrying the recorded calls,
// verdicts, results and state commands and naming the source commits it
// copies (StepCopied); no tool runs, nobody is asked, no approval is saved
// again. The fork is pinned to the source's snapshot (agent, location,
// project, rules, narrowing, limits), recorded with forked_from, so its
// next step (req.At+1) is decided like any other against the source's
// rules. A step 0, a step past the source's last step or one that is not
// final, and a source that diverged are refused (see [ForkRequest]). With a
// client-chosen fork id it is idempotent and finishes a fork that failed
// halfway; a run with that id that is not the same fork is [ErrConflict].
func (e *Engine) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	return e.runs.Fork(ctx, req)
}

// — submitter —

// SubmitStep decides, executes and commits one model turn's calls and returns
// their results in model order once every call is terminal.
//
// Each call passes visibility, availability, input and permission before any
// effect. A step whose allowed calls are all read-only or idempotent is one
// commit; otherwise a decide commit (verdicts and ToolCallStarted) precedes
// every effect and a settle commit records the results. A step already
// committed with the same calls returns its recorded outcome; with other
// calls, [ErrConflict]. A host that loses the commit race for the step
// executes nothing with an effect and returns [ErrConflict].
func (e *Engine) SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error) {
	out, err := e.submitter.SubmitStep(ctx, req)
	if out != nil && out.Host == "" { // decided here (a holder's answer relayed names the holder)
		out.Host = e.cfg.Host
	}
	return out, err
}

// — awaiter —

// AwaitStep returns the step's outcome once it is final, wherever the reply
// that finished it arrived: the projection follows every host's commits. It
// waits at most the request's timeout (default [DefaultAwaitTimeout], at most
// [MaxAwaitTimeout]), then returns [ErrAwaitTimeout]: ask again.
func (e *Engine) AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error) {
	return e.awaiter.AwaitStep(ctx, req)
}

// WatchStep implements [StepWatcher].
func (e *Engine) WatchStep(ctx context.Context, req AwaitRequest, done func(*StepOutcome, error)) {
	e.awaiter.WatchStep(ctx, req, done)
}

// — replier —

// Reply answers a ticket: once, always or reject (permission), answer or
// reject (input). It is validated first — unknown, already resolved,
// expired, stale, wrong kind — each failure with its own error and no commit.
// An approval is checked again against the run's pinned rules and the
// current configuration; a deny in either blocks the call. "always" saves the
// ticket's save patterns for the project and approves every other pending
// ticket of the project that now evaluates to allow. A reject cascades to
// the run's other pending tickets, and without a message ends the run
// declined. Approved calls run on this host; the step's results are in the
// answer once it is final.
func (e *Engine) Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error) {
	return e.replier.Reply(ctx, req)
}

// SweepTickets settles the pending tickets that can no longer be answered:
// past their deadline (the model reads that approval expired) or whose tool
// is no longer the identity the model was shown (a stale tool call). Hosts
// run it every second; when several race for one ticket, one commit wins and
// the others change nothing.
//
// It looks at the projection's index of pending tickets, not at their runs:
// only a run with a ticket due is read, so a host with a hundred thousand
// runs waiting sweeps them in milliseconds and keeps none in memory.
func (e *Engine) SweepTickets(ctx context.Context) error {
	return e.replier.SweepTickets(ctx)
}

// Tickets returns a page of the pending tickets, oldest first. The page is
// read from the projection's index of pending tickets: it costs its own
// tickets (and one read of each of their runs), not the number pending.
func (e *Engine) Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error) {
	return e.replier.Tickets(ctx, req)
}

// — registrar —

// RegisterTools adds tools to the location layer: ToolRegistered events on
// the scope's subject, so every host rebuilds them. The latest registration
// of a name wins and beats the process layer; closing the scope reveals
// what it covered. All descriptors are validated before anything is
// committed.
func (e *Engine) RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error) {
	return e.registrar.RegisterTools(ctx, req)
}

// CloseScope revokes exactly the scope's registrations.
func (e *Engine) CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error) {
	return e.registrar.CloseScope(ctx, req)
}

// Install gives this host implementations of location-layer tools of a
// scope: a call of one of them runs here. A host without the implementation
// of a registration answers calls with "Tool is not installed on this host",
// and never runs anything else in its place.
func (e *Engine) Install(scope string, tools ...*executor.Tool) {
	e.registrar.Install(scope, tools...)
}

// — approvals —

// Grants lists the saved approvals in force (of one project, when set).
func (e *Engine) Grants(ctx context.Context, req GrantsRequest) ([]projection.Grant, error) {
	return e.approvals.Grants(ctx, req)
}

// RevokeGrant withdraws a saved approval — and any duplicate of it (the same
// project, action and resource saved by a concurrent reply) — with a
// GrantRevoked commit on the project's grant subject.
func (e *Engine) RevokeGrant(ctx context.Context, req RevokeRequest) (*projection.Grant, error) {
	return e.approvals.RevokeGrant(ctx, req)
}

// — outputs —

// SweepOutputs deletes this host's spilled output files whose retention has
// passed — by the expiry the log recorded for them, or for a file the log
// does not know, by its age — and records what it deleted in one
// OutputFileSwept commit. Files still within their retention are kept. Hosts
// run it at start and every hour; `engine sweep` runs it now.
func (e *Engine) SweepOutputs(ctx context.Context) (*SweepResult, error) {
	return e.outputs.SweepOutputs(ctx)
}

// — recovery —

// Recover settles what a crash of this host left open, for every run whose
// open step this host committed last: a call that started and has no result
// runs again if it is read-only or idempotent (at most three attempts in
// all), and is settled as indeterminate otherwise; a step whose calls are
// all terminal is finalized. Steps left open by other hosts are theirs to
// recover, or, once a host's lease expired, the host's that takes the lease
// over (see takeovers), or an operator's, with RecoverHost. StartHost runs
// it once the projection has caught up and the host holds its lease.
func (e *Engine) Recover(ctx context.Context) error {
	return e.recovery.Recover(ctx)
}

// RecoverHost settles, on this host, what the named host left open, exactly
// as that host would on its own start (see Recover). Hosts with a lease do
// this on their own once the gone host's lease expired; RecoverHost is for
// an operator who does not want to wait, or a host without a lease. Named
// wrongly — the host is alive and still running a call — nothing runs
// twice that has an effect: that call settles here as indeterminate and the
// live host's result is refused as a conflict; a read-only call may run
// twice.
func (e *Engine) RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error) {
	return e.recovery.RecoverHost(ctx, req)
}

// — MCP servers —

// MCPServers lists the MCP servers a location's configuration declares
// and what this host knows of them: connecting, ready (with the listed
// tools, their effect classes and whether the location's runs may see
// them, and the skipped tools with reasons), down (and why) or not enabled
// (and why). It starts the enabled servers this host does not run yet and
// waits (MCPOptions.StartWait at most) for their first listing.
func (e *Engine) MCPServers(ctx context.Context, req MCPServersRequest) (*MCPServerList, error) {
	return e.registrar.mcp.MCPServers(ctx, req)
}

// StopMCP stops this engine's connections to MCP servers (a stdio server's
// process is stopped) and starts no other. A [Host] does it when its Run
// returns; an Engine built with [New] is stopped by its caller.
func (e *Engine) StopMCP() { e.registrar.mcp.close() }

// StopSandboxes stops this engine's warm sandbox helpers (their calls in
// flight are killed) and refuses later sandboxed calls. A [Host] does it
// when its Run returns; an Engine built with [New] is stopped by its
// caller (an idle helper also exits on its own after a while).
func (e *Engine) StopSandboxes() { _ = e.submitter.sandboxes.Close() }
