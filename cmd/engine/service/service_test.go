package service_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// slowWork is how long the slow tool works.
const slowWork = 200 * time.Millisecond

// slowTool sleeps for slowWork: a step with it is work of a known length.
func slowTool(t *testing.T) *executor.Tool {
	t.Helper()
	tool, err := executor.New("slow", "Sleeps, then answers.",
		func(ctx context.Context, _ executor.Call, _ struct{}) (string, error) {
			select {
			case <-time.After(slowWork):
				return "slept", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}, executor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func start(t *testing.T, extra ...*executor.Tool) *servicetest.Engine {
	t.Helper()
	e, err := servicetest.Start(extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// control asks the service's micro control subject verb and decodes the
// answer into out (what `nats micro info|stats stepgate` ask).
func control(t *testing.T, e *servicetest.Engine, verb micro.Verb, out any) {
	t.Helper()
	subject, err := micro.ControlSubject(verb, client.ServiceName, "")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := e.Conn.Request(subject, nil, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
}

// The service has every endpoint of the wire contract, and each publishes
// the JSON Schemas of its request and response as its metadata.
func TestEndpointsPublishTheirSchemas(t *testing.T) {
	e := start(t)
	want := client.Endpoints()
	slices.Sort(want)
	got := service.Names()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the service serves %v, the wire contract has %v", got, want)
	}
	var info micro.Info
	control(t, e, micro.InfoVerb, &info)
	if len(info.Endpoints) != len(want) {
		t.Fatalf("info lists %d endpoints, want %d", len(info.Endpoints), len(want))
	}
	for _, ep := range info.Endpoints {
		req, resp, err := client.Schema(ep.Name)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Metadata["request_schema"] != string(req) || ep.Metadata["response_schema"] != string(resp) {
			t.Errorf("%s: metadata %.80q…, want its request_schema and response_schema", ep.Name, ep.Metadata)
		}
		if ep.Subject != client.Subject(ep.Name) {
			t.Errorf("%s on %s, want %s", ep.Name, ep.Subject, client.Subject(ep.Name))
		}
	}
}

// figures is an endpoint's stats: micro's own and the service's data.
func figures(t *testing.T, e *servicetest.Engine) map[string]*micro.EndpointStats {
	t.Helper()
	var stats micro.Stats
	control(t, e, micro.StatsVerb, &stats)
	out := map[string]*micro.EndpointStats{}
	for _, ep := range stats.Endpoints {
		out[ep.Name] = ep
	}
	return out
}

func data(t *testing.T, ep *micro.EndpointStats) service.Figures {
	t.Helper()
	var f service.Figures
	if err := json.Unmarshal(ep.Data, &f); err != nil {
		t.Fatalf("%s: data %s: %v", ep.Name, ep.Data, err)
	}
	return f
}

// `nats micro stats stepgate` counts the errors the service answers and
// the time the work took: a request refused as invalid counts in micro's
// own figures; every answer, with what it took from receipt to answer, in
// the endpoint's data.
func TestStatsCountErrorsAndTheWork(t *testing.T) {
	e := start(t, slowTool(t))
	c := client.New(e.Conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var out json.RawMessage
	if err := c.Do(ctx, client.EndpointStartRun, map[string]any{"disabled_tools": true}, &out); client.Code(err) != client.CodeInvalidInput {
		t.Fatalf("start_run with an unknown field: %v, want invalid_input", err)
	}
	if _, err := c.Show(ctx, client.ShowRequest{Run: "01J0000000000000000000000Z"}); client.Code(err) != client.CodeRunNotFound {
		t.Fatalf("show of no run: %v, want run_not_found", err)
	}
	run, err := c.StartRun(ctx, client.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	step, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: run.Run, Step: 1, Calls: []client.CallRequest{{ID: "a", Tool: "slow"}}})
	if err != nil || len(step.Results) != 1 || step.Results[0].Content != "slept" {
		t.Fatalf("submit a slow call: %+v %v, want it slept", step, err)
	}
	took := time.Since(began)

	f := figures(t, e)
	if ep := f[client.EndpointStartRun]; ep.NumErrors != 1 || !strings.Contains(ep.LastError, "no_such_field") && !strings.Contains(ep.LastError, "disabled_tools") {
		t.Errorf("start_run: micro counts %d errors (last %q), want the invalid request", ep.NumErrors, ep.LastError)
	}
	if d := data(t, f[client.EndpointStartRun]); d.Requests != 2 || d.Errors != 1 || d.ErrorCodes[client.CodeInvalidInput] != 1 {
		t.Errorf("start_run data %+v, want 2 requests, 1 invalid_input", d)
	}
	if d := data(t, f[client.EndpointShow]); d.Requests != 1 || d.Errors != 1 || d.ErrorCodes[client.CodeRunNotFound] != 1 {
		t.Errorf("show data %+v, want its run_not_found", d)
	}
	d := data(t, f[client.EndpointSubmitStep])
	if d.Requests != 1 || d.Errors != 0 || d.ProcessingTime < slowWork || d.ProcessingTime > took || d.AverageProcessingTime != d.ProcessingTime {
		t.Errorf("submit_step data %+v, want one request that took at least the tool's %s and at most the client's %s", d, slowWork, took)
	}
}

// The real nats CLI shows the schemas and the figures.
func TestNATSCLIShowsSchemasAndFigures(t *testing.T) {
	cli, err := exec.LookPath("nats")
	if err != nil {
		t.Skip("the nats CLI is not installed (go install github.com/nats-io/natscli/nats@latest): the protocol it speaks is tested above")
	}
	e := start(t)
	c := client.New(e.Conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out json.RawMessage
	if err := c.Do(ctx, client.EndpointTickets, map[string]any{"no_such_field": 1}, &out); client.Code(err) != client.CodeInvalidInput {
		t.Fatalf("tickets with an unknown field: %v", err)
	}
	info, err := exec.CommandContext(ctx, cli, "--server", e.URL, "micro", "info", client.ServiceName, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("nats micro info: %v\n%s", err, info)
	}
	if !strings.Contains(string(info), "request_schema") || !strings.Contains(string(info), "response_schema") {
		t.Errorf("nats micro info shows no schemas:\n%.2000s", info)
	}
	stats, err := exec.CommandContext(ctx, cli, "--server", e.URL, "micro", "stats", client.ServiceName, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("nats micro stats: %v\n%s", err, stats)
	}
	if !strings.Contains(string(stats), `"num_errors": 1`) && !strings.Contains(string(stats), `"num_errors":1`) {
		t.Errorf("nats micro stats counts no error:\n%.3000s", stats)
	}
}
