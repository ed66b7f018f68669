package client

import (
	"embed"
	"fmt"
)

//go:generate go run ./internal/schemagen/gen -dir schema
//go:generate go run ./internal/refdoc/gen -dir ../docs/reference

// Each endpoint's request and response types: the JSON Schemas under
// schema/ are generated from them (go generate; a test fails when the
// files differ from what the types give), and the service publishes them
// as each endpoint's metadata ("request_schema", "response_schema").
var endpointTypes = map[string][2]any{
	EndpointStartRun:    {StartRunRequest{}, RunInfo{}},
	EndpointMaterialize: {MaterializeRequest{}, Catalog{}},
	EndpointSubmitStep:  {SubmitStepRequest{}, StepOutcome{}},
	EndpointEndRun:      {EndRunRequest{}, RunSummary{}},
	EndpointRuns:        {RunsRequest{}, RunPage{}},
	EndpointLocations:   {LocationsRequest{}, LocationList{}},
	EndpointShow:        {ShowRequest{}, Run{}},
	EndpointReply:       {ReplyRequest{}, ReplyResult{}},
	EndpointTickets:     {TicketsRequest{}, TicketPage{}},
	EndpointAwait:       {AwaitRequest{}, StepOutcome{}},
	EndpointGrants:      {GrantsRequest{}, []Grant{}},
	EndpointRevoke:      {RevokeRequest{}, Grant{}},
	EndpointSweep:       {Empty{}, SweepResult{}},
	EndpointRecover:     {RecoverRequest{}, RecoverResult{}},
	EndpointRegister:    {RegisterRequest{}, RegisterResult{}},
	EndpointCloseScope:  {CloseScopeRequest{}, CloseScopeRequest{}},
	EndpointQuarantine:  {QuarantineRequest{}, QuarantineList{}},
	EndpointFork:        {ForkRequest{}, ForkResult{}},
	EndpointRunFacts:    {RunFactsRequest{}, RunFacts{}},
	EndpointMCPServers:  {MCPServersRequest{}, MCPServerList{}},
	EndpointRecordTurn:  {RecordTurnRequest{}, TurnRecord{}},
}

// EndpointTypes returns an endpoint's request and response values (zero
// values of their types), for generating their schemas; ok is false for an
// endpoint the service does not have.
func EndpointTypes(endpoint string) (request, response any, ok bool) {
	t, ok := endpointTypes[endpoint]
	return t[0], t[1], ok
}

// Endpoints lists every endpoint of the service.
func Endpoints() []string {
	out := make([]string, 0, len(endpointTypes))
	for name := range endpointTypes {
		out = append(out, name)
	}
	return out
}

//go:embed schema/*.json
var schemas embed.FS

// SchemaFile is the name, under schema/, of an endpoint's request schema
// (response false) or response schema.
func SchemaFile(endpoint string, response bool) string {
	if response {
		return endpoint + ".response.json"
	}
	return endpoint + ".request.json"
}

// Schema returns the JSON Schemas of an endpoint's request and response,
// as checked in under schema/.
func Schema(endpoint string) (request, response []byte, err error) {
	if _, ok := endpointTypes[endpoint]; !ok {
		return nil, nil, fmt.Errorf("schema of %q: no such endpoint", endpoint)
	}
	if request, err = schemas.ReadFile("schema/" + SchemaFile(endpoint, false)); err != nil {
		return nil, nil, fmt.Errorf("schema of %s: %w", endpoint, err)
	}
	if response, err = schemas.ReadFile("schema/" + SchemaFile(endpoint, true)); err != nil {
		return nil, nil, fmt.Errorf("schema of %s: %w", endpoint, err)
	}
	return request, response, nil
}
