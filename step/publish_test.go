package step_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// Each of many concurrent publishers gets the ack of its own message: the
// sequence it is told holds exactly what it sent. A refused publish gets
// its own error, and the others are not disturbed.
func TestPublisherAnswersEachWaiter(t *testing.T) {
	s, pub, ctx := startPublisher(t)
	const writers, each = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			subject := fmt.Sprintf("sg.test.w%d", w)
			last := uint64(0)
			for i := range each {
				body := fmt.Sprintf("%d/%d", w, i)
				m := nats.NewMsg(subject)
				m.Data = []byte(body)
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
				ack, err := pub.Publish(ctx, m)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", body, err)
					return
				}
				if _, data, _, err := s.Log.Get(ctx, ack.Sequence); err != nil || string(data) != body {
					errs <- fmt.Errorf("%s: told sequence %d, which holds %q (%v)", body, ack.Sequence, data, err)
					return
				}
				// The same expectation again is refused, to this caller.
				m = nats.NewMsg(subject)
				m.Data = []byte("stale")
				m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
				var apiErr *jetstream.APIError
				if _, err := pub.Publish(ctx, m); !errors.As(err, &apiErr) {
					errs <- fmt.Errorf("%s: stale expectation gave %v, want a server error", body, err)
					return
				}
				last = ack.Sequence
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A wait that ends with its context leaves the publisher usable: the late
// answer of the abandoned message reaches no later caller.
func TestPublisherAfterAnAbandonedWait(t *testing.T) {
	s, pub, ctx := startPublisher(t)
	for i := range 200 {
		gone, stop := context.WithCancel(ctx)
		stop()
		m := nats.NewMsg("sg.test.abandoned")
		m.Data = []byte("abandoned")
		switch ack, err := pub.Publish(gone, m); {
		case errors.Is(err, context.Canceled):
		case err == nil: // answered before the wait looked at its context: its own ack
			if _, data, _, err := s.Log.Get(ctx, ack.Sequence); err != nil || string(data) != "abandoned" {
				t.Fatalf("abandoned publish: told sequence %d, which holds %q (%v)", ack.Sequence, data, err)
			}
		default:
			t.Fatalf("publish with an ended context: %v", err)
		}
		m = nats.NewMsg("sg.test.kept")
		m.Data = []byte(strconv.Itoa(i))
		ack, err := pub.Publish(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, data, _, err := s.Log.Get(ctx, ack.Sequence); err != nil || string(data) != strconv.Itoa(i) {
			t.Fatalf("publish %d: told sequence %d, which holds %q (%v)", i, ack.Sequence, data, err)
		}
	}
}

// startPublisher starts a server with a publisher on its connection.
func startPublisher(t *testing.T) (*steptest.Server, *step.Publisher, context.Context) {
	s := steptest.Start(t, "")
	pub, err := step.NewPublisher(s.Conn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return s, pub, ctx
}
