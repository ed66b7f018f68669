package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// An asynchronous publisher whose acknowledgements are late (here: a
// responder on the subject that answers the first only after 400 ms, past
// the client's 200 ms stall) waits for them instead of failing: the
// rebuild's fill stalled so on a busy machine under -race.
func TestRawAsyncWaitsOutAStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := newEnv(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	acker, err := e.srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer acker.Close()
	seq := 0
	sub, err := acker.Subscribe("stall.x", func(m *nats.Msg) {
		if seq++; seq == 1 {
			time.Sleep(400 * time.Millisecond) // one ack late, and every one behind it
		}
		_ = m.Respond(fmt.Appendf(nil, `{"stream":"STALL","seq":%d}`, seq))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := acker.Flush(); err != nil {
		t.Fatal(err)
	}
	msgs := make([]*nats.Msg, 300) // more than the 256 in flight
	for i := range msgs {
		msgs[i] = &nats.Msg{Subject: "stall.x", Data: []byte("x"), Header: nats.Header{}}
	}
	w, err := rawAsyncMsgs(ctx, e.nc, msgs, func(int) uint64 { return 0 })
	if err != nil {
		t.Fatalf("publishes behind a late ack: %v", err)
	}
	if w.n != len(msgs) || w.wall < 400*time.Millisecond {
		t.Errorf("window of %d messages in %s, want %d in 400 ms or more", w.n, w.wall, len(msgs))
	}
}
