package commands

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// An error that means NATS was unavailable reaches the client as the
// retryable code unavailable, never as internal; the codes a client
// branches on otherwise are kept.
func TestCodeOfNATSOutages(t *testing.T) {
	for _, tc := range []struct {
		why  string
		err  error
		want string
	}{
		{"a commit in flight when the connection broke", fmt.Errorf("settle step 3: %w", nats.ErrDisconnected), CodeUnavailable},
		{"a request while reconnecting", fmt.Errorf("refresh run: %w", nats.ErrConnectionReconnecting), CodeUnavailable},
		{"JetStream not answering yet after a restart", fmt.Errorf("commit: %w", jetstream.ErrNoStreamResponse), CodeUnavailable},
		{"a 503 from the JetStream API (no quorum, not enabled yet)", fmt.Errorf("info: %w", &jetstream.APIError{Code: 503, ErrorCode: 10039, Description: "jetstream not enabled for account"}), CodeUnavailable},
		{"a read that got no answer in time", fmt.Errorf("stream info: %w", context.DeadlineExceeded), CodeUnavailable},
		{"a commit that gave up waiting for NATS", fmt.Errorf("%w: NATS unavailable: %w", ErrUnavailable, nats.ErrDisconnected), CodeUnavailable},
		{"an await that timed out keeps its own code", fmt.Errorf("%w: %w", ErrAwaitTimeout, context.DeadlineExceeded), CodeAwaitTimeout},
		{"a lost race keeps its code", fmt.Errorf("commit: %w", step.ErrConflict), CodeConflict},
		{"anything else is internal", errors.New("disk full"), CodeInternal},
		{"another server error is internal", &jetstream.APIError{Code: 500, ErrorCode: 10049, Description: "stream store failed"}, CodeInternal},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code(%v) = %q, want %q", tc.why, tc.err, got, tc.want)
		}
	}
}
