package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
)

// A host that is asked about a run first catches up at least as far as the
// asking client has seen. The client carries nothing: whatever it has seen
// was committed before it was answered, so it is in the log when the request
// arrives here, and the log says where to look.
//
//   - Writes need nothing up front. A host that decides against an old state
//     commits with an old expectation of the run's last sequence, the server
//     refuses it, and the host catches up with the run and decides again (a
//     step, a catalogue, an end; a reply validates again).
//   - A reply is a decision with authority (it runs tools): it syncs the
//     projection to the stream's last sequence first, so a tool replaced or
//     a grant revoked on another host a moment ago counts.
//   - A refusal commits nothing, so nothing would catch it: before refusing
//     anything about a run (unknown run, step out of order, step not final,
//     ticket not found, …) the host looks up the run subject's last sequence
//     (one direct get), and when the log holds more of the run than the
//     projection, syncs the projection that far and decides again.
//   - A read of one run does the same first; a read across runs syncs the
//     projection to the stream's last sequence.
//
// The single host's happy path pays nothing: its submissions are decided
// against the run as it last committed it, and commit at once.

// maxRaceRetries bounds how often a submission is decided again after its
// commit lost the race to another commit of the run that left the step
// still to be committed.
const maxRaceRetries = 3

// raced calls fn, a command that commits to run, and calls it again after
// catching up with the run when its commit lost the race (another host
// committed to the run meanwhile, or this host had not folded that commit
// yet), a few times at most.
func raced[T any](ctx context.Context, e *base, run string, fn func() (*T, error)) (*T, error) {
	for attempt := 0; ; attempt++ {
		out, err := fn()
		if !errors.Is(err, step.ErrConflict) || attempt == maxRaceRetries {
			return out, err
		}
		if cerr := e.catchUp(ctx, run); cerr != nil {
			return nil, errors.Join(err, cerr)
		}
	}
}

// known makes sure a run another host started a moment ago is visible
// here: when the projection does not have the run, it catches up with the
// stream first (the tail would bring it soon, but not yet).
func (b *base) known(ctx context.Context, run string) {
	if _, cached := b.configs.Load(run); cached || !events.ValidID(run) {
		return // a run this host has decided for is known
	}
	if _, ok, err := b.proj.Header(run); ok || err != nil {
		return
	}
	_ = b.proj.Sync(ctx, b.log)
}

// catchUp brings this host's projection of run up to the run's last commit
// in the log. A run the projection does not hold is looked for in the whole
// stream (its start may need commits of other subjects, such as a
// registration).
func (b *base) catchUp(ctx context.Context, run string) error {
	if !events.ValidID(run) {
		return nil
	}
	r, err := b.header(run)
	last := r.LastSeq
	if errors.Is(err, ErrRunNotFound) {
		if err := b.proj.Sync(ctx, b.log); err != nil {
			return fmt.Errorf("catch up with run %s: %w", run, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if err := b.syncRun(ctx, run, last); err != nil {
		return fmt.Errorf("catch up with run %s: %w", run, err)
	}
	return nil
}

// syncRun brings run up to date here when the log holds commits of it after
// stream sequence after. One direct get on the run's subject says (one round
// trip when there are none); the follower then folds, in stream order,
// everything up to the run's last commit — so the registrations, grants and
// revocations committed before it on other subjects are folded too, and no
// decision here sees the run newer than them.
func (b *base) syncRun(ctx context.Context, run string, after uint64) error {
	last, err := b.log.SubjectLastSeq(ctx, events.RunSubject(run))
	if err != nil || last <= after {
		return err
	}
	return b.proj.SyncTo(ctx, last)
}

// recheck is what a handler does before it returns refusal about run: it
// catches up with the run and reports whether to decide again — always, when
// the log could change the answer: the follower may have folded what was
// missing between the refusal and the look at the log, so "nothing new now"
// does not mean the refusal saw it. Deciding again is in memory. When
// catching up fails the answer is unknown: the error says so and carries no
// refusal's code.
func (b *base) recheck(ctx context.Context, run string, refusal error) (bool, error) {
	switch Code(refusal) {
	case CodeInternal, CodeInvalidInput, CodeRunNotActive, CodeTicketExpired, CodeTicketKind, CodeRunDiverged:
		return false, refusal // the log cannot change it: an end or a divergence absorbs, a deadline passed stays passed
	}
	if err := b.catchUp(ctx, run); err != nil {
		return false, fmt.Errorf("%v; catching up with the log to be sure failed: %w", refusal, err)
	}
	return true, refusal
}

// syncAll makes every commit made before the call visible here: a read
// across runs (lists of runs and tickets) answers as of now.
func (b *base) syncAll(ctx context.Context) error {
	if err := b.proj.Sync(ctx, b.log); err != nil {
		return fmt.Errorf("catch up with the log: %w", err)
	}
	return nil
}

// syncReads makes a read answer as of now: the tail of run when one is
// named (a run the stream does not hold is then simply not found), else
// every run.
func (b *base) syncReads(ctx context.Context, run string) error {
	if run == "" {
		return b.syncAll(ctx)
	}
	return b.catchUp(ctx, run)
}

// refresh folds the run's commits this host has not seen yet (after losing a
// commit race); see syncRun.
func (b *base) refresh(ctx context.Context, run string, after uint64) error {
	if err := b.syncRun(ctx, run, after); err != nil {
		return fmt.Errorf("refresh run %s: %w", run, err)
	}
	return nil
}
