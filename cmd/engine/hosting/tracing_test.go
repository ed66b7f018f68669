package hosting

import (
	"testing"
)

func TestTracingIsOffUnlessTheEnvironmentAsks(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{"nothing set", nil, false, ""},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, ""},
		{"a traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, ""},
		{"the otlp exporter", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false, ""},
		{"the SDK disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"another exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, `OTEL_TRACES_EXPORTER="zipkin": want otlp or none`},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, `OTLP protocol "grpc": only http/protobuf is supported`},
		{"http/protobuf", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on, err := tracingWanted(func(k string) string { return tc.env[k] })
			if on != tc.on || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
				t.Errorf("tracingWanted = %v, %v; want %v, %q", on, err, tc.on, tc.err)
			}
		})
	}
}
