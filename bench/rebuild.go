package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// runW5 is the rebuild: a stream of sizes().rebuildEvents events (runs of
// echo steps, see fillStream), folded from sequence 1 by a projector on a
// fresh state directory, as a host whose checkpoint is lost does; then a
// host started on the checkpoint that projector left, as a host restarts.
// Reported: the rebuild's events per second (from projection.Open until
// the projector has applied the stream's last sequence), and the ms from
// commands.StartHost's call to its return (checkpoint loaded, log opened,
// tail caught up, lease held, recovery done: the host answers commands).
// A rebuild or a restart that does not hold every run and step the fill
// wrote, or that quarantined or diverged anything, fails the workload: its
// rate would be of another fold.
func runW5(ctx context.Context, o Options) (Result, error) {
	e, err := newEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	defer e.close()
	target := o.sizes().rebuildEvents
	progress(o, "w5: filling the stream with %d events", target)
	start := time.Now()
	f, err := fillStream(ctx, e, target)
	if err != nil {
		return nil, err
	}
	progress(o, "w5: %d events in %d commits of %d runs (%d steps) written in %s; rebuilding",
		f.events, f.commits, f.runs, f.steps, time.Since(start).Round(time.Millisecond))
	log, err := step.Open(ctx, e.js, step.StreamConfig{})
	if err != nil {
		return nil, err
	}
	if last, err := log.LastSeq(ctx); err != nil || last != f.last {
		return nil, errors.Join(err, fmt.Errorf("the stream's last sequence is %d, the fill's %d", last, f.last))
	}
	state := filepath.Join(e.dir, "rebuild")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}

	r := newResult(o)
	r["events"], r["commits"], r["runs"], r["steps"] = f.events, f.commits, f.runs, f.steps
	p, stop, w, err := rebuild(ctx, log, filepath.Join(state, "projections.db"), f)
	if err != nil {
		return nil, err
	}
	r["rebuild_ms"] = ms(w.wall)
	r["rebuild_events_per_s"] = w.rate()
	r["rebuild_commits_per_s"] = perSecond(f.commits, w.wall)
	r["rebuild_cpu_us_per_event"] = w.cpuPer()
	r["rebuild_runs"], r["rebuild_steps"], err = f.holds(p, "the rebuild")
	closed, cerr := timed(f.commits, stop)
	if err = errors.Join(err, cerr); err != nil {
		return nil, err
	}
	r["checkpoint_ms"] = ms(closed.wall)
	r["checkpoint_mb"] = dirMB(state)
	progress(o, "w5: rebuilt in %s (%v events/s), final checkpoint %s (%v MB); restarting from it",
		w.wall.Round(time.Millisecond), r["rebuild_events_per_s"], closed.wall.Round(time.Millisecond), r["checkpoint_mb"])

	return r, restart(ctx, e, state, f, r)
}

// rebuild opens a projector at path, a fresh checkpoint, and has it follow
// log until it has applied f.last, in one window of f.events. It checks
// that the projector applied every commit and skipped none. stop ends the
// following and closes the projector: its final checkpoint.
func rebuild(ctx context.Context, log *step.Log, path string, f filled) (*projection.Projector, func() error, window, error) {
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var p *projection.Projector
	w, err := timed(f.events, func() (err error) {
		if p, err = projection.Open(path, projection.Options{}); err != nil {
			return err
		}
		go func() { done <- p.Follow(fctx, log) }()
		return p.WaitFor(ctx, f.last)
	})
	if p == nil {
		cancel()
		return nil, nil, w, err
	}
	stop := func() error {
		cancel()
		ferr := <-done
		if errors.Is(ferr, context.Canceled) {
			ferr = nil
		}
		return errors.Join(ferr, p.Close())
	}
	if err == nil && p.Replayed() != f.commits {
		err = fmt.Errorf("the rebuild applied %d commits, the fill wrote %d", p.Replayed(), f.commits)
	}
	if err != nil {
		return nil, nil, w, errors.Join(err, stop())
	}
	return p, stop, w, nil
}

// restart starts a host on the checkpoint in state, timed into r's
// ready_ms, and checks that it holds what the fill wrote.
func restart(ctx context.Context, e *env, state string, f filled, r Result) error {
	var h *commands.Host
	w, err := timed(1, func() (err error) {
		h, err = startBenchHost(ctx, e.js, state, 1)
		return err
	})
	if err != nil {
		return fmt.Errorf("restart from the checkpoint: %w", err)
	}
	r["ready_ms"] = ms(w.wall)
	r["replayed"] = h.Proj.Replayed()
	r["restart_runs"], r["restart_steps"], err = f.holds(h.Proj, "the restarted host")
	return errors.Join(err, h.Close())
}

// holds counts the runs and steps p holds and fails unless they are f's,
// none diverged and nothing quarantined.
func (f filled) holds(p *projection.Projector, who string) (runs, steps int, err error) {
	sums, err := p.Runs()
	if err != nil {
		return 0, 0, err
	}
	for _, s := range sums {
		steps += s.Steps
		if s.Diverged {
			return 0, 0, fmt.Errorf("%s: run %s diverged", who, s.ID)
		}
	}
	if q := p.Quarantine(); q.Total > 0 && len(q.Recent) > 0 {
		return 0, 0, fmt.Errorf("%s quarantined %d messages, the latest: %+v", who, q.Total, q.Recent[len(q.Recent)-1])
	} else if q.Total > 0 {
		return 0, 0, fmt.Errorf("%s quarantined %d messages", who, q.Total)
	}
	if len(sums) != f.runs || steps != f.steps {
		return 0, 0, fmt.Errorf("%s holds %d runs and %d steps, the fill wrote %d and %d", who, len(sums), steps, f.runs, f.steps)
	}
	return len(sums), steps, nil
}
