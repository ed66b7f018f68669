package projection

import "context"

// SyncTo asks the follower to look at the stream now and waits until the
// projector has applied stream sequence seq, the projector failed, or ctx
// ends. A caller that folded a run's commits ahead of the follower
// (ApplyOwn) waits with it until every earlier commit of the stream — a
// registration, a grant — is folded too.
func (p *Projector) SyncTo(ctx context.Context, seq uint64) error {
	select {
	case p.nudge <- struct{}{}:
	default:
	}
	return p.WaitFor(ctx, seq)
}
