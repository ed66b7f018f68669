package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/step"
)

// announce opens the holders bucket, writes this host's declaration there
// (Config.Locations; its liveness is its lease's) and reads the other
// hosts' as they stand; it returns the actor that follows their changes
// until ctx ends. A host that forwards nothing (no Config.Forward) neither
// announces nor follows: no other host can reach it, nor it them.
func (h *Host) announce(ctx context.Context) (func(context.Context), error) {
	e := h.Engine
	if e.cfg.Forward == nil {
		return nil, nil
	}
	hs, err := step.OpenHolders(ctx, h.js, h.Log)
	if err != nil {
		return nil, err
	}
	rec := step.Holder{Host: e.cfg.Host, Instance: e.cfg.IDs.New(time.Now()), Locations: e.cfg.Locations, At: time.Now().UTC()}
	if err := hs.Put(ctx, rec); err != nil {
		return nil, err
	}
	ch, err := hs.Watch(ctx)
	if err != nil {
		return nil, err
	}
	for u := range ch { // the records as they stand, then nil
		if u == nil {
			break
		}
		e.fleet.sawHolder(u)
	}
	return func(ctx context.Context) {
		wait := outageFirstWait
		for ctx.Err() == nil {
			for u := range ch {
				e.fleet.sawHolder(u)
				wait = outageFirstWait
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, outageWaitLimit)
			if ch, err = hs.Watch(ctx); err != nil {
				e.cfg.Logger.Warn("following the other hosts' locations", "err", fmt.Errorf("watch again: %w", err))
				ch = closed()
			}
		}
	}, nil
}

// closed is a closed channel of holder updates.
func closed() chan *step.HolderUpdate {
	ch := make(chan *step.HolderUpdate)
	close(ch)
	return ch
}
