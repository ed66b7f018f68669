package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// grantsCache is the saved approvals of one project as of a grants version.
type grantsCache struct {
	ver   uint64
	rules gate.Ruleset
}

// saved returns a project's approvals in force as allow rules, rebuilt only
// when grants changed.
func (h *approvals) saved(project string) gate.Ruleset {
	ver := h.proj.GrantsVersion()
	if v, ok := h.grantRules.Load(project); ok {
		if c := v.(*grantsCache); c.ver == ver {
			return c.rules
		}
	}
	rules := savedRules(project, h.proj.Grants(project))
	h.grantRules.Store(project, &grantsCache{ver: ver, rules: rules})
	return rules
}

// savedRules turns the grants of project among grants into allow rules.
func savedRules(project string, grants []projection.Grant) gate.Ruleset {
	var rs gate.Ruleset
	for _, g := range grants {
		if g.Project == project {
			rs = append(rs, gate.Rule{Action: g.Action, Resource: g.Resource, Effect: gate.Allow, Source: gate.SourceSaved})
		}
	}
	return rs
}

// Grants answers [Engine.Grants].
func (h *approvals) Grants(ctx context.Context, req GrantsRequest) ([]projection.Grant, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h.proj.Grants(req.Project), nil
}

// RevokeGrant answers [Engine.RevokeGrant].
func (h *approvals) RevokeGrant(ctx context.Context, req RevokeRequest) (*projection.Grant, error) {
	if req.Principal == "" {
		return nil, fmt.Errorf("revoke %s: who revokes is required: %w", req.ID, ErrInvalidRequest)
	}
	g, ok := h.proj.Grant(req.ID)
	if !ok || g.Action == "" {
		return nil, fmt.Errorf("grant %q: %w", req.ID, ErrGrantNotFound)
	}
	if g.Revoked != nil {
		return &g, nil // revoking twice changes nothing
	}
	var evs []events.Event
	for _, other := range h.proj.Grants(g.Project) {
		if other.Action == g.Action && other.Resource == g.Resource || other.ID == g.ID {
			evs = append(evs, events.GrantRevoked{ID: other.ID, Project: g.Project, Principal: req.Principal})
		}
	}
	if len(evs) == 0 { // shadowed by an older duplicate that is revoked already
		evs = append(evs, events.GrantRevoked{ID: g.ID, Project: g.Project, Principal: req.Principal})
	}
	if err := h.commitSubject(ctx, events.GrantSubject(g.Project), events.KindGrant, evs); err != nil {
		return nil, fmt.Errorf("revoke grant %s: %w", req.ID, err)
	}
	g, _ = h.proj.Grant(req.ID)
	return &g, nil
}
