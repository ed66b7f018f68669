package hosting

import (
	"context"
	"fmt"

	group "github.com/oklog/run"
)

// Run serves until ctx ends (then it returns nil: a clean stop) or one of
// the parts stops on its own (then its error: the service failing, the
// projector stopping, a listener failing), and then stops them all and the
// host. Call it once; Close does nothing after it.
func (s *Served) Run(ctx context.Context) error {
	s.done = true
	defer s.svcCancel()
	// The long-running parts are actors of one group: the first to stop
	// (ctx, the service failing, the projector failing) stops them all.
	var g group.Group
	sctx, cancel := context.WithCancel(ctx)
	g.Add(func() error {
		<-sctx.Done()
		return ctx.Err()
	}, func(error) { cancel() })
	g.Add(s.svcWait, func(error) { s.svcCancel() })
	if s.metrics != nil {
		g.Add(s.metrics.run, s.metrics.stop)
	}
	if s.notifier != nil { // delivers the fleet's lifecycle events beside the host
		nctx, ncancel := context.WithCancel(context.Background())
		g.Add(func() error { return s.notifier.Run(nctx) }, func(error) { ncancel() })
	}
	if s.web != nil {
		wctx, wcancel := context.WithCancel(context.Background())
		defer wcancel()
		g.Add(func() error { return s.web.run(wctx) }, func(error) { s.web.stop(wcancel) })
	}
	quit := make(chan struct{})
	host := s.host
	g.Add(func() error {
		select {
		case <-host.Done():
			return fmt.Errorf("projector stopped: %w", host.Err())
		case <-quit:
			return nil
		}
	}, func(error) { close(quit) })
	err := g.Run()
	s.svcCancel()
	cancel()
	if cerr := s.stop(); cerr != nil {
		s.log.Error("stopping", "err", cerr)
	}
	if ctx.Err() != nil {
		return nil // interrupted: a clean stop
	}
	return err
}
