package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/descriptor"
)

// A request sent at once after Dial is not mistaken for one cut by a
// reconnect: the connection's first "connected" callback arrives on its own
// goroutine, after Dial returned, and a register sent before it failed with
// "the connection to NATS broke while the request was in flight: not sent
// again" although the connection never broke.
func TestRequestRightAfterDialIsNotCutByTheFirstConnect(t *testing.T) {
	e, err := servicetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 40 {
		c, err := client.Dial(e.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.RegisterTools(ctx, client.RegisterRequest{Scope: fmt.Sprintf("dial-%d", i),
			Tools: []descriptor.Descriptor{{Name: "dialed", Description: "d", InputSchema: []byte(`{"type":"object"}`)}}})
		c.Close()
		if err != nil {
			t.Fatalf("register %d right after Dial: %v", i, err)
		}
	}
}
