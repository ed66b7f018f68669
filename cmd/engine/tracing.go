package main

import (
	"context"
	"strconv"

	"github.com/nats-io/nats.go"
	sgclient "github.com/stepgate/stepgate/client"
)

// envTrue reports whether an environment variable's value says yes
// (strconv.ParseBool's true values).
func envTrue(v string) bool {
	b, _ := strconv.ParseBool(v)
	return b
}

// envTrace returns ctx continuing the trace the environment names, as a
// parent process passes it down (TRACEPARENT, and TRACESTATE, in W3C
// form): a verb's requests carry it to the service, so `engine approve`
// run from a traced script is linked from the wait it ends. ctx unchanged
// when TRACEPARENT is unset or does not parse.
func envTrace(ctx context.Context, getenv func(string) string) context.Context {
	tp := getenv("TRACEPARENT")
	if tp == "" {
		return ctx
	}
	h := nats.Header{sgclient.TraceparentHeader: {tp}}
	if ts := getenv("TRACESTATE"); ts != "" {
		h[sgclient.TracestateHeader] = []string{ts}
	}
	return sgclient.ExtractTrace(ctx, h)
}
