package commands

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// Metrics observes what a host does, for monitoring: cmd/engine implements it
// with Prometheus counters and histograms, so this package stays free of any
// metrics library. The engine calls it on the step path: an implementation
// must be safe for concurrent use, must not block, and should not allocate.
// What it counts never changes what the engine decides. The zero
// [Config.Metrics] observes nothing.
type Metrics interface {
	// Commit is called once per commit this host put to the log and the log
	// answered: conflict false when it was appended, true when another
	// commit of the subject came first (a lost race: the host catches up
	// and decides again, or gives up with ErrConflict). Commits that fail
	// otherwise (the log unavailable) are not counted.
	Commit(kind events.Kind, conflict bool)
	// Verdict is called once per permission verdict this host appended to
	// the log (events.VerdictAllow, VerdictBlock, VerdictConfirm or
	// VerdictReject): each call of a decided step, and an approved call that
	// its re-check blocks. A decision taken again after a lost race counts
	// once, when it is appended.
	Verdict(verdict string)
	// ToolDone is called when a call of tool has run on this host, with how
	// long it ran (the wait for an execution slot excluded).
	ToolDone(tool string, took time.Duration)
	// Resumed is called when a reply approved a call and the call's result
	// is committed, with the time from the reply's arrival at this host.
	Resumed(took time.Duration)
	// Forwarded is called when this host sent a request that needs
	// location to the host that holds it, and that host answered.
	Forwarded(location string)
	// NoExecutor is called when a request that needs location was
	// answered ErrNoExecutor: no live host holds it.
	NoExecutor(location string)
}

// noMetrics observes nothing: the default.
type noMetrics struct{}

func (noMetrics) Commit(events.Kind, bool)       {}
func (noMetrics) Verdict(string)                 {}
func (noMetrics) ToolDone(string, time.Duration) {}
func (noMetrics) Resumed(time.Duration)          {}
func (noMetrics) Forwarded(string)               {}
func (noMetrics) NoExecutor(string)              {}

// Backlog is what a host has waiting, as its projection holds it: read when
// asked (a scrape), never kept up per step.
type Backlog struct {
	// Pending is the number of tickets waiting for an answer.
	Pending int
	// Oldest is when the oldest pending ticket was issued (the time in its
	// id); zero when none is pending.
	Oldest time.Time
	// Applied is the last stream sequence the projection applied.
	Applied uint64
	// Quarantined counts the messages of the log the folds skipped.
	Quarantined uint64
}

// Backlog returns what the host has waiting. It reads the projection only,
// and is safe for concurrent use.
func (e *Engine) Backlog() Backlog {
	n, oldest := e.proj.PendingStats() // O(1): the index is ordered by id, so by time
	b := Backlog{Pending: n, Applied: e.proj.Seq(), Quarantined: e.proj.Quarantine().Total}
	if id, err := ulid.ParseStrict(oldest); err == nil && events.ValidID(oldest) {
		b.Oldest = ulid.Time(id.Time())
	}
	return b
}

// Lag returns how many stream sequences this host's projection trails the
// stream: the stream's last sequence less the last one applied (0 when it
// is up to date). It asks the stream once; ctx bounds the wait.
func (e *Engine) Lag(ctx context.Context) (uint64, error) {
	applied := e.proj.Seq()
	last, err := e.log.LastSeq(ctx)
	if err != nil {
		return 0, fmt.Errorf("projector lag: %w", err)
	}
	return last - min(applied, last), nil
}

// observeCommit tells the metrics what the log answered to c, and the
// verdicts of c once it is appended.
func (b *base) observeCommit(c *events.Commit, err error) {
	m := b.cfg.Metrics
	if err != nil {
		if errors.Is(err, step.ErrConflict) {
			m.Commit(c.Kind, true)
		}
		return
	}
	m.Commit(c.Kind, false)
	for _, ev := range c.Events {
		if d, ok := ev.(events.PermissionDecided); ok {
			m.Verdict(d.Verdict)
		}
	}
}

// toolDone tells the metrics that a call of tool ran from start until now.
// Durations are the wall clock's (time.Now, monotonic), not Config.Clock's:
// they measure this process, not the log's time.
func (b *base) toolDone(tool string, start time.Time) {
	b.cfg.Metrics.ToolDone(tool, time.Since(start))
}

// resumed tells the metrics how long a reply took to resume its call, when
// it approved one: res is answered once the call's result is committed.
func (b *base) resumed(res *ReplyResult, arrived time.Time) {
	if res.Approved {
		b.cfg.Metrics.Resumed(time.Since(arrived))
	}
}
