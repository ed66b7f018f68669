package hosting

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// traceShutdown bounds how long stopping waits for the last spans to be
// exported.
const traceShutdown = 5 * time.Second

// errTraceProtocol refuses an OTLP protocol this binary does not export.
var errTraceProtocol = errors.New("only http/protobuf is supported")

// tracingWanted reports whether the environment asks for traces: off by
// default; on with OTEL_TRACES_EXPORTER=otlp, or with an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) and
// no OTEL_TRACES_EXPORTER; OTEL_TRACES_EXPORTER=none and
// OTEL_SDK_DISABLED=true turn it off whatever else is set. Another
// exporter, or an OTLP protocol other than http/protobuf, is an error.
func tracingWanted(getenv func(string) string) (bool, error) {
	if disabled, _ := strconv.ParseBool(getenv("OTEL_SDK_DISABLED")); disabled {
		return false, nil
	}
	on := false
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false, nil
	case "otlp":
		on = true
	case "":
		on = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: want otlp or none", exp)
	}
	if !on {
		return false, nil
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return false, fmt.Errorf("OTLP protocol %q: %w", proto, errTraceProtocol)
	}
	return true, nil
}

// NewTracing returns the TracerProvider the environment asks for (getenv
// reads it, os.Getenv in a binary; see tracingWanted) and how to flush and
// stop it; nil and a no-op when tracing is off. version is the service's
// version on the spans. The exporter reads the standard OTEL_EXPORTER_OTLP_*
// variables (endpoint, headers, timeout, compression, certificates), the
// SDK OTEL_TRACES_SAMPLER and OTEL_BSP_*, the resource OTEL_SERVICE_NAME
// and OTEL_RESOURCE_ATTRIBUTES (the service is "stepgate" by default; a
// span names its host in stepgate.host where it matters: commits).
func NewTracing(ctx context.Context, getenv func(string) string, version string) (trace.TracerProvider, func() error, error) {
	on, err := tracingWanted(getenv)
	if err != nil || !on {
		return nil, func() error { return nil }, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "stepgate"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(), resource.WithFromEnv()) // later ones win: the environment over the defaults
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("trace resource: %w", err), exp.Shutdown(ctx))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), traceShutdown)
		defer cancel()
		return tp.Shutdown(ctx)
	}, nil
}
