package step

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A publish whose ack is lost (here a subscriber takes the message and
// never answers, as a stream leader whose node went down would not) fails
// after the ack wait, with an error Unavailable counts, even under a
// context without deadline: the caller tries the same commit again instead
// of holding the step for ever.
func TestPublishWithALostAck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := StartEmbedded(ctx, EmbeddedConfig{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	nc, err := e.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.SubscribeSync("lost.ack"); err != nil {
		t.Fatal(err)
	}
	p, err := newPublisher(nc, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Publish(context.Background(), &nats.Msg{Subject: "lost.ack", Data: []byte("x")})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, jetstream.ErrAsyncPublishTimeout) || !Unavailable(err) {
			t.Fatalf("publish with a lost ack = %v, want the ack timeout, counted unavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the publish still waits 10 s after its ack was lost")
	}
}
