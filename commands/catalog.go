package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// catalog computes the tools visible under rules and narrowing: the registry
// minus tools whose action is wholly denied; nothing under DenyAll. This is
// visibility, not authorization.
func (e *Engine) catalog(rules gate.Ruleset, n gate.Narrowing) (Catalog, events.CatalogAdvertised) {
	var cat Catalog
	var adv events.CatalogAdvertised
	h := sha256.New()
	if n == gate.Configured {
		for _, t := range sortedTools(e.effective()) {
			d := t.desc
			if gate.WhollyDenied(d.Action, rules) {
				continue
			}
			cat.Tools = append(cat.Tools, ToolDef{Name: d.Name, Description: d.Description,
				InputSchema: d.InputSchema, OutputSchema: d.OutputSchema})
			adv.Tools = append(adv.Tools, events.AdvertisedTool{Name: d.Name, Identity: t.identity})
			fmt.Fprintf(h, "%s\x00%s\x00", d.Name, t.identity)
		}
	}
	cat.Fingerprint = hex.EncodeToString(h.Sum(nil))
	adv.Fingerprint = cat.Fingerprint
	return cat, adv
}

// Materialize returns the tools visible to the run now. When the catalogue
// differs from the one the run last advertised (a tool was replaced), the new
// identities are committed before they are returned, so every host checks
// later calls against what the model was shown.
func (e *Engine) Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	e.known(ctx, req.Run)
	return raced(ctx, e, req.Run, func() (*Catalog, error) { return e.materialize(ctx, req) })
}

// materialize is Materialize against the run as this host holds it.
func (e *Engine) materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	held := e.lockRun(req.Run)
	defer held.unlock()
	var (
		rules   gate.Ruleset
		n       gate.Narrowing
		current string
		last    uint64
		status  projection.Status
	)
	if err := e.viewRun(req.Run, func(r *projection.Run) {
		cfg := e.config(r)
		rules, n = cfg.rules, cfg.narrowing
		current, last, status = r.Catalog.Fingerprint, r.LastSeq, r.Status
	}); err != nil {
		return nil, err
	}
	if status == projection.StatusEnded {
		return nil, fmt.Errorf("materialize run %s: %w", req.Run, ErrRunNotActive)
	}
	cat, adv := e.catalog(rules, n)
	if cat.Fingerprint != current {
		c := e.newCommit(req.Run, 0, events.KindCatalog, adv)
		if _, err := e.commit(ctx, c, last); err != nil {
			return nil, fmt.Errorf("materialize run %s: %w", req.Run, err)
		}
	}
	return &cat, nil
}

// known makes sure a run another host started a moment ago is visible
// here: when the projection does not have the run, it catches up with the
// stream first (the follower would within its poll interval).
func (e *Engine) known(ctx context.Context, run string) {
	if _, cached := e.configs.Load(run); cached || !events.ValidID(run) {
		return // a run this host has decided for is known
	}
	if ok, err := e.proj.View(run, func(*projection.Run) {}); ok || err != nil {
		return
	}
	_ = e.proj.Sync(ctx, e.log)
}

// viewRun calls fn with the run under the projector's lock, or returns
// ErrRunNotFound. The run's last step is whole; earlier ones may be stubs
// (see viewStep).
func (e *Engine) viewRun(run string, fn func(r *projection.Run)) error {
	return e.viewWith(run, 0, fn)
}

// viewStep is viewRun with step n whole.
func (e *Engine) viewStep(run string, n int, fn func(r *projection.Run)) error {
	return e.viewWith(run, max(n, 0), fn)
}

// viewWhole is viewRun with every step whole.
func (e *Engine) viewWhole(run string, fn func(r *projection.Run)) error {
	return e.viewWith(run, -1, fn)
}

// viewWith is viewRun with step n whole (every step when n < 0). The
// projector's methods are called directly, not through a function value,
// so the compiler sees that fn does not outlive the call and callers'
// closures stay off the heap.
func (e *Engine) viewWith(run string, n int, fn func(r *projection.Run)) error {
	if !events.ValidID(run) {
		return fmt.Errorf("run %q: %w", run, ErrRunNotFound)
	}
	var (
		ok  bool
		err error
	)
	switch {
	case n < 0:
		ok, err = e.proj.ViewWhole(run, fn)
	case n > 0:
		ok, err = e.proj.ViewStep(run, n, fn)
	default:
		ok, err = e.proj.View(run, fn)
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", run, err)
	}
	if !ok {
		return fmt.Errorf("run %s: %w", run, ErrRunNotFound)
	}
	return nil
}
