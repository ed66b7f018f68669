package commands

import (
	"context"
	"time"

	"github.com/stepgate/stepgate/client"
)

// Inspector answers questions about the log itself rather than a run. Its
// methods are safe for concurrent use and read only.
type Inspector interface {
	// Quarantine lists the messages of the log this host's projection
	// skipped (undecodable, on a subject they do not belong to, impossible
	// for their run), after catching up with the stream as it is now, as
	// far as ctx allows.
	Quarantine(ctx context.Context, req QuarantineRequest) (*QuarantineList, error)
}

var _ Inspector = (*Engine)(nil)

// quarantineSync bounds how long Quarantine waits for the projector to
// catch up before it answers with what it has.
const quarantineSync = 5 * time.Second

// The quarantine's request and response are the wire contract's.
type (
	QuarantineRequest = client.QuarantineRequest
	QuarantineList    = client.QuarantineList
)

// Quarantine implements [Inspector].
func (e *Engine) Quarantine(ctx context.Context, _ QuarantineRequest) (*QuarantineList, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, quarantineSync)
	defer cancel()
	_ = e.proj.Sync(sctx, e.log) // best effort: a projector behind lists what it has
	q := e.proj.Quarantine()
	msgs := make([]client.Quarantined, len(q.Recent))
	for i, m := range q.Recent {
		msgs[i] = client.Quarantined(m)
	}
	return &QuarantineList{Seq: e.proj.Seq(), Total: q.Total, Messages: msgs}, nil
}
