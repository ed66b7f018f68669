package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// catalog computes the tools visible under rules and narrowing: the registry
// minus tools whose action is wholly denied and MCP servers' tools the
// run's pins do not let it see (mcpVisible); nothing under DenyAll. This is
// visibility, not authorization.
func (h *runs) catalog(rules gate.Ruleset, n gate.Narrowing, pins []events.MCPServerPin) (Catalog, events.CatalogAdvertised) {
	return catalogOf(h.reg.effective(), rules, n, pins)
}

// catalogOf is [runs.catalog] over the effective registry reg.
func catalogOf(reg map[string]effectiveTool, rules gate.Ruleset, n gate.Narrowing, pins []events.MCPServerPin) (Catalog, events.CatalogAdvertised) {
	var cat Catalog
	var adv events.CatalogAdvertised
	sum := sha256.New()
	if n == gate.Configured {
		for _, t := range sortedTools(reg) {
			d := t.desc
			if !mcpVisible(d.Name, pins) || gate.WhollyDenied(d.Action, rules) {
				continue
			}
			cat.Tools = append(cat.Tools, ToolDef{Name: d.Name, Description: d.Description,
				InputSchema: d.InputSchema, OutputSchema: d.OutputSchema})
			adv.Tools = append(adv.Tools, events.AdvertisedTool{Name: d.Name, Identity: t.identity})
			fmt.Fprintf(sum, "%s\x00%s\x00", d.Name, t.identity)
		}
	}
	cat.Fingerprint = hex.EncodeToString(sum.Sum(nil))
	adv.Fingerprint = cat.Fingerprint
	return cat, adv
}

// Materialize answers [Engine.Materialize].
func (h *runs) Materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	h.known(ctx, req.Run)
	return raced(ctx, h.base, req.Run, func() (*Catalog, error) { return h.materialize(ctx, req) })
}

// materialize is Materialize against the run as this host holds it.
func (h *runs) materialize(ctx context.Context, req MaterializeRequest) (*Catalog, error) {
	held := h.lockRun(req.Run)
	defer held.unlock()
	r, err := h.header(req.Run)
	if err != nil {
		return nil, err
	}
	cfg := h.config(&r)
	current, from := r.Catalog.Fingerprint, at(&r)
	if r.Status == projection.StatusEnded {
		return nil, fmt.Errorf("materialize run %s: %w", req.Run, ErrRunNotActive)
	}
	cat, adv := h.catalogFor(cfg)
	if cat.Fingerprint != current {
		c := h.newCommit(req.Run, 0, events.KindCatalog, adv)
		if _, err := h.commit(ctx, &c, from); err != nil {
			return nil, fmt.Errorf("materialize run %s: %w", req.Run, err)
		}
	}
	return &cat, nil
}

// shownCatalog is a run's catalogue as last computed, and the effective
// registry it was computed from.
type shownCatalog struct {
	reg *registryCache
	cat Catalog
	adv events.CatalogAdvertised
}

// catalogFor is the run's catalogue under cfg (its pinned rules, narrowing
// and MCP pins, which do not change while cfg is the run's): computed again
// only when the effective registry changed since the last time, so an
// agent that materializes before every turn pays for it once. The tools
// are a copy: the caller may keep or change them.
func (h *runs) catalogFor(cfg *runConfig) (Catalog, events.CatalogAdvertised) {
	reg := h.reg.effectiveCache()
	s := cfg.shown.Load()
	if s == nil || s.reg != reg {
		cat, adv := catalogOf(reg.tools, cfg.rules, cfg.narrowing, cfg.mcp)
		s = &shownCatalog{reg: reg, cat: cat, adv: adv}
		cfg.shown.Store(s)
	}
	cat := s.cat
	cat.Tools = slices.Clone(cat.Tools)
	return cat, s.adv
}
