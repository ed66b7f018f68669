package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Grants lists the saved approvals in force (of one project, when set).
func (e *Engine) Grants(ctx context.Context, req GrantsRequest) ([]projection.Grant, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return e.proj.Grants(req.Project), nil
}

// RevokeGrant withdraws a saved approval — and any duplicate of it (the same
// project, action and resource saved by a concurrent reply) — with a
// GrantRevoked commit on the project's grant subject.
func (e *Engine) RevokeGrant(ctx context.Context, req RevokeRequest) (*projection.Grant, error) {
	if req.Principal == "" {
		return nil, fmt.Errorf("revoke %s: who revokes is required: %w", req.ID, ErrInvalidRequest)
	}
	g, ok := e.proj.Grant(req.ID)
	if !ok || g.Action == "" {
		return nil, fmt.Errorf("grant %q: %w", req.ID, ErrGrantNotFound)
	}
	if g.Revoked != nil {
		return &g, nil // revoking twice changes nothing
	}
	var evs []events.Event
	for _, other := range e.proj.Grants(g.Project) {
		if other.Action == g.Action && other.Resource == g.Resource || other.ID == g.ID {
			evs = append(evs, events.GrantRevoked{ID: other.ID, Project: g.Project, Principal: req.Principal})
		}
	}
	if len(evs) == 0 { // shadowed by an older duplicate that is revoked already
		evs = append(evs, events.GrantRevoked{ID: g.ID, Project: g.Project, Principal: req.Principal})
	}
	if err := e.commitSubject(ctx, events.GrantSubject(g.Project), events.KindGrant, evs); err != nil {
		return nil, fmt.Errorf("revoke grant %s: %w", req.ID, err)
	}
	g, _ = e.proj.Grant(req.ID)
	return &g, nil
}
