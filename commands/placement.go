package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/projection"
)

// Placement (DESIGN.md §8): a request that acts on a run's location is
// handled on a host that holds it. The request is redirected whole — the
// holder decides, executes and commits — rather than decided here and
// executed there, because deciding a call already reads the location (its
// paths resolve to real paths, an edit's file is digested for the verdict),
// and because the host that commits a call's start is then the one whose
// lease fences it and whose restart settles it. The cost is one NATS round
// trip host to host for a request that lands on another host (see
// BenchmarkForwardedStep).

// lastHost is the host that committed the run's last step: the one a
// forwarded request tries first.
func lastHost(r *projection.RunHeader) string {
	if s := r.Step(r.Steps); s != nil {
		return s.Host
	}
	return ""
}

// runHere returns nil when this host holds run r's location, else why not
// (wrapping ErrNotHolder).
func (b *base) runHere(r *projection.RunHeader) error {
	return b.fleet.holds(r.Snapshot.Location, r.Snapshot.Place)
}

// placed reports whether any of calls acts on the location: its tool is
// installed here and marked placed, or is not installed here (it may be on
// the holder). Only calls of tools installed here and marked
// executor.Anywhere run on a host that does not hold the location.
func (h *submitter) placed(calls []CallRequest) bool {
	reg := h.reg.effective()
	for _, c := range calls {
		t, ok := reg[c.Tool]
		if !ok || t.impl == nil || t.impl.Placed() {
			return true
		}
	}
	return false
}

// elsewhere routes a request about run that acts on its location: handled
// is false when this host holds the location (or the run has no place:
// started before placement, or unknown here — the handler then answers
// as it always did); otherwise the request went to a holder and err is its
// answer (or ErrNoExecutor, or ErrNotHolder when the request was itself
// forwarded here).
func (b *base) elsewhere(ctx context.Context, run, op string, req, resp any) (handled bool, err error) {
	r, err := b.header(run)
	if err != nil || r.Snapshot.Place == nil {
		return false, nil
	}
	here := b.runHere(&r)
	if here == nil {
		return false, nil
	}
	if isForwarded(ctx) {
		return true, here
	}
	return true, b.forward(ctx, r.Snapshot.Location, run, lastHost(&r), op, req, resp, here)
}

// startElsewhere routes a run's start: handled is false when this host may
// hold the location (it declares it and has the directory). Otherwise the
// start goes to a live host that declares it; with none, the error is why
// this host does not hold it, as a request the caller must correct
// (invalid_input) when no other host declares the location, ErrNoExecutor
// when some do and none took it.
func (h *runs) startElsewhere(ctx context.Context, req StartRunRequest, out *RunInfo) (handled bool, err error) {
	here := h.fleet.mayHold(req.Location)
	if here == nil {
		return false, nil
	}
	if isForwarded(ctx) {
		return true, here
	}
	if h.fleet.fwd == nil || len(h.fleet.candidates(req.Location, req.Location, "")) == 0 {
		if err := checkLocation(req.Location); err != nil {
			return true, err // as a host alone has always said it
		}
		return true, fmt.Errorf("%w: %w", here, ErrInvalidRequest)
	}
	return true, h.forward(ctx, req.Location, req.Location, "", OpStartRun, req, out, here)
}

// forwardRun sends op's request about run to a holder of its location; why
// is why this host does not hold it.
func (b *base) forwardRun(ctx context.Context, run, op string, req, resp any, why error) error {
	r, err := b.header(run)
	if err != nil {
		return err
	}
	return b.forward(ctx, r.Snapshot.Location, run, lastHost(&r), op, req, resp, why)
}

// placeAt is where a run's calls may run: its location and the place it
// pinned (nil: a run started before placement, run wherever it is).
type placeAt struct {
	loc   string
	place *events.Place
	// contain is the sandbox the calls run in there (see sandboxPolicy);
	// nil: unsandboxed.
	contain *sandbox.Policy
	// profile is the profile contain was built from, as a call's result
	// records it (events.SandboxRecord.Profile).
	profile *events.SandboxProfile
	// escalate is how a call the sandbox refused asks to run outside it;
	// nil: the refusal is its result (see escalation).
	escalate *escalateTo
}

// placeAt is the run's placeAt.
func (c *runConfig) placeAt() placeAt {
	return placeAt{loc: c.location, place: c.place, contain: c.contain, profile: c.profile, escalate: c.escalate}
}

// checkPlace returns nil when call c may make its effect here: its tool
// acts on no location, or the run has no place, or the directory at the
// location is still the place the run pinned — checked right before the
// call starts, so a directory moved away and made again since the step
// was decided is not acted on.
func (h *submitter) checkPlace(at placeAt, c *planned) error {
	if at.place == nil || c.tool == nil || !c.tool.Placed() {
		return nil
	}
	return h.fleet.places.Check(at.loc, placeOf(at.place), h.cfg.Host)
}

// HostName is the name this host commits under (Config.Host).
func (e *Engine) HostName() string { return e.cfg.Host }
