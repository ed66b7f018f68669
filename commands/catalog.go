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
	r, err := e.header(req.Run)
	if err != nil {
		return nil, err
	}
	cfg := e.config(&r)
	rules, n := cfg.rules, cfg.narrowing
	current, last := r.Catalog.Fingerprint, r.LastSeq
	if r.Status == projection.StatusEnded {
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
	if _, ok, err := e.proj.Header(run); ok || err != nil {
		return
	}
	_ = e.proj.Sync(ctx, e.log)
}
