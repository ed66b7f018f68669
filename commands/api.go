package commands

import (
	"context"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/projection"
)

// API is what a client may ask: the in-process [Engine] and a remote client of
// the NATS service both implement it. Every method is safe for concurrent use
// and honours ctx; errors carry a stable [Code].
type API interface {
	StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error)
	Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error)
	SubmitStep(ctx context.Context, req SubmitStepRequest) (*StepOutcome, error)
	EndRun(ctx context.Context, req EndRunRequest) (*RunSummary, error)
	Runs(ctx context.Context) ([]RunSummary, error)
	Show(ctx context.Context, req ShowRequest) (*projection.Run, error)
}

// The requests and responses of the API are the wire contract's (package
// client); these names keep the commands' callers compiling.
type (
	StartRunRequest    = client.StartRunRequest
	RunInfo            = client.RunInfo
	MaterializeRequest = client.MaterializeRequest
	ToolDef            = client.ToolDef
	Catalog            = client.Catalog
	CallRequest        = client.CallRequest
	SubmitStepRequest  = client.SubmitStepRequest
	CallResult         = client.CallResult
	ResultPart         = client.ResultPart
	StepOutcome        = client.StepOutcome
	EndRunRequest      = client.EndRunRequest
	ShowRequest        = client.ShowRequest
	RecordTurnRequest  = client.RecordTurnRequest
	TurnRecord         = client.TurnRecord
)

// RunSummary is one line of a run listing.
type RunSummary = projection.Summary
