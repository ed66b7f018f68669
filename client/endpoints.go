package client

import "context"

// The service's name and the subjects of its endpoints: "stepgate.<endpoint>".
const (
	ServiceName   = "stepgate"
	SubjectPrefix = "stepgate"
)

// Endpoint names, one per command of the service.
const (
	EndpointStartRun    = "start_run"
	EndpointMaterialize = "materialize"
	EndpointSubmitStep  = "submit_step"
	EndpointEndRun      = "end_run"
	EndpointRuns        = "runs"
	EndpointShow        = "show"
	EndpointReply       = "reply"
	EndpointTickets     = "tickets"
	EndpointAwait       = "await_step"
	EndpointGrants      = "grants"
	EndpointRevoke      = "revoke_grant"
	EndpointSweep       = "sweep_outputs"
	EndpointRecover     = "recover_host"
	EndpointRegister    = "register_tools"
	EndpointCloseScope  = "close_scope"
	EndpointQuarantine  = "quarantine"
	EndpointFork        = "fork"
	EndpointRunFacts    = "run_facts"
	EndpointMCPServers  = "mcp_servers"
	EndpointLocations   = "locations"
	EndpointRecordTurn  = "record_turn"
)

// Subject is the NATS subject of an endpoint.
func Subject(endpoint string) string { return SubjectPrefix + "." + endpoint }

// API is every endpoint of the service, in the wire contract's types: what
// a client may ask. [*Client] implements it over NATS; the engine's commands
// implement it in process (commands.Wire). Every method is safe for
// concurrent use and honours ctx; errors carry a stable [Code].
type API interface {
	StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error)
	Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error)
	SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error)
	EndRun(ctx context.Context, req EndRunRequest) (*RunSummary, error)
	Runs(ctx context.Context) ([]RunSummary, error)
	RunsPage(ctx context.Context, req RunsRequest) (*RunPage, error)
	Show(ctx context.Context, req ShowRequest) (*Run, error)
	Fork(ctx context.Context, req ForkRequest) (*ForkResult, error)
	RecordTurn(ctx context.Context, req RecordTurnRequest) (*TurnRecord, error)
	RunFacts(ctx context.Context, req RunFactsRequest) (*RunFacts, error)

	Reply(ctx context.Context, req ReplyRequest) (*ReplyResult, error)
	Tickets(ctx context.Context, req TicketsRequest) (*TicketPage, error)
	AwaitStep(ctx context.Context, req AwaitRequest) (*StepOutcome, error)
	Grants(ctx context.Context, req GrantsRequest) ([]Grant, error)
	RevokeGrant(ctx context.Context, req RevokeRequest) (*Grant, error)
	SweepOutputs(ctx context.Context) (*SweepResult, error)
	RecoverHost(ctx context.Context, req RecoverRequest) (*RecoverResult, error)

	RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error)
	CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error)
	Quarantine(ctx context.Context, req QuarantineRequest) (*QuarantineList, error)
	MCPServers(ctx context.Context, req MCPServersRequest) (*MCPServerList, error)
	Locations(ctx context.Context, req LocationsRequest) (*LocationList, error)
}

// Empty is the request of an endpoint that takes none (sweep_outputs): an empty JSON object, or no body.
type Empty struct{}
