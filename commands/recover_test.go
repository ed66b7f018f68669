package commands_test

import (
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step/steptest"
)

// Recovering "no host" is refused; recovering a host that left nothing open
// settles nothing and commits nothing.
func TestRecoverHostRequests(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	if _, err := h.RecoverHost(ctx, commands.RecoverRequest{}); commands.Code(err) != commands.CodeInvalidInput {
		t.Errorf("recover with no host = %v, want code %s", err, commands.CodeInvalidInput)
	}
	if _, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	before, _ := h.Log.LastSeq(ctx)
	res, err := h.RecoverHost(ctx, commands.RecoverRequest{Host: "elsewhere"})
	if err != nil || len(res.Steps) != 0 {
		t.Errorf("recover a host with nothing open = %+v, %v; want no steps", res, err)
	}
	if after, _ := h.Log.LastSeq(ctx); after != before {
		t.Errorf("recovering nothing committed %d messages", after-before)
	}
}
