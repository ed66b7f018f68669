package commands

import (
	"context"
	"time"

	"github.com/stepgate/stepgate/projection"
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

// QuarantineRequest asks for the quarantined messages. It has no fields
// yet; it is a struct so that filters can be added.
type QuarantineRequest struct{}

// QuarantineList is the quarantine as of a stream sequence: the latest
// messages (at most projection.QuarantineKeep, oldest first) and how many
// there were in all.
type QuarantineList struct {
	Seq      uint64                   `json:"seq"`
	Total    uint64                   `json:"total"`
	Messages []projection.Quarantined `json:"messages"`
}

// Quarantine implements [Inspector].
func (e *Engine) Quarantine(ctx context.Context, _ QuarantineRequest) (*QuarantineList, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, quarantineSync)
	defer cancel()
	_ = e.proj.Sync(sctx, e.log) // best effort: a projector behind lists what it has
	q := e.proj.Quarantine()
	msgs := q.Recent
	if msgs == nil {
		msgs = []projection.Quarantined{}
	}
	return &QuarantineList{Seq: e.proj.Seq(), Total: q.Total, Messages: msgs}, nil
}
