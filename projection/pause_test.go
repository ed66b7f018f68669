package projection_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step/steptest"
)

// A host that commits folds its commits itself; its tail, which delivers
// every commit, brings them a second time until it is set aside. Then the
// projector follows through the host's own commits, fetching the other
// hosts' commits between them by direct gets, in stream order: the
// connection receives each commit's acknowledgement and, from the tail,
// far fewer than one message per commit; the fold is the stream's.
func TestABusyHostSetsItsTailAside(t *testing.T) {
	s := steptest.Start(t, "")
	p, err := projection.Open(filepath.Join(t.TempDir(), "projections.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	stop := follow(t, p, s.Log)
	t.Cleanup(func() { stop() })
	own, other := newWriter(t, s.Log), newWriter(t, s.Log)
	own.own = p
	runs, elsewhere := []string{own.start(), own.start()}, other.start()
	wait(t, p, other.seq)

	const commits, every, gap = 1000, 50, 3
	before := s.Conn.Stats().InMsgs
	for i := range commits {
		if i%every == every-1 {
			for range gap {
				other.echo(elsewhere)
			}
			own.echo(runs[i%2])
			wait(t, p, own.seq) // the other host's commits before it are folded
			continue
		}
		own.echo(runs[i%2])
	}
	got := s.Conn.Stats().InMsgs - before
	acks := uint64(commits + commits/every*gap)
	t.Logf("%d commits (%d of another host): the connection received %d messages", acks, acks-commits, got)
	if limit := acks + commits/2; got > limit {
		t.Errorf("%d commits made the connection receive %d messages, want at most %d: "+
			"their acknowledgements and fewer tail deliveries than half of the host's own commits", acks, got, limit)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Sync(ctx, s.Log); err != nil {
		t.Fatal(err)
	}
	want, err := following(t, s.Log, max(own.seq, other.seq)).All()
	if err != nil {
		t.Fatal(err)
	}
	have, err := p.All()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("the busy host's fold differs from the stream's (-stream +host):\n%s", d)
	}
}
