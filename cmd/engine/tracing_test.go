package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it keeps the
// names and trace ids of the spans it is sent, and each span's attributes.
type otlpReceiver struct {
	mu    sync.Mutex
	spans map[string][]string // span name → trace ids (hex)
	attrs map[string][]map[string]string
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var msg coltrace.ExportTraceServiceRequest
	if err != nil || req.URL.Path != "/v1/traces" || proto.Unmarshal(body, &msg) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans[s.Name] = append(r.spans[s.Name], hexOf(s.TraceId))
				if r.attrs != nil {
					kv := map[string]string{}
					for _, a := range s.Attributes {
						kv[a.Key] = otlpValue(a.Value)
					}
					r.attrs[s.Name] = append(r.attrs[s.Name], kv)
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

// `engine serve` with OTEL_EXPORTER_OTLP_ENDPOINT exports its spans over
// OTLP/HTTP: a step submitted under an agent's span arrives as an
// execute_tool span of the agent's trace, flushed when serve stops.
func TestServeExportsTracesOverOTLP(t *testing.T) {
	recv := &otlpReceiver{spans: map[string][]string{}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0"}, w, io.Discard)
		_ = w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed %q: %v (serve: %v)", line, err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	url, _, _ := strings.Cut(strings.TrimPrefix(line, "stepgate serving on "), ",")
	cf := connFlags{natsURL: url}
	c, err := cf.dialClient(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	agentTP := sdktrace.NewTracerProvider()
	defer func() { _ = agentTP.Shutdown(context.Background()) }()
	actx, agent := agentTP.Tracer("agent").Start(ctx, "agent turn")
	run, err := c.StartRun(actx, sgclient.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": "hi"})
	if _, err := c.SubmitStep(actx, sgclient.SubmitStepRequest{Run: run.Run, Step: 1, Calls: []sgclient.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}); err != nil {
		t.Fatal(err)
	}
	agent.End()
	c.Close()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("serve: %v", err)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	got := recv.spans["execute_tool echo"]
	if len(got) != 1 || got[0] != agent.SpanContext().TraceID().String() {
		t.Errorf("exported execute_tool echo spans in traces %v, want one in the agent's trace %s (all: %v)", got, agent.SpanContext().TraceID(), recv.spans)
	}
}

func TestEnvTraceContinuesTheParentProcesssTrace(t *testing.T) {
	env := map[string]string{"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "TRACESTATE": "vendor=x"}
	sc := trace.SpanContextFromContext(envTrace(context.Background(), func(k string) string { return env[k] }))
	if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" || !sc.IsRemote() || sc.TraceState().Get("vendor") != "x" {
		t.Errorf("span context from the environment %v, want the TRACEPARENT's, remote, with its TRACESTATE", sc)
	}
	for _, bad := range []string{"", "garbage", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"} {
		env["TRACEPARENT"] = bad
		if sc := trace.SpanContextFromContext(envTrace(context.Background(), func(k string) string { return env[k] })); sc.IsValid() {
			t.Errorf("TRACEPARENT=%q gave %v, want no span context", bad, sc)
		}
	}
}
