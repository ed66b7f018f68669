package commands

import (
	"context"
	"errors"
	"fmt"
	"github.com/stepgate/stepgate/client"
	"slices"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/step"
)

// LocationLayer is the registry layer of tools registered at run time.
const LocationLayer = "location"

// Registrar is what a client may ask of the registry's location layer.
type Registrar interface {
	RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error)
	CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error)
}

// The registry's requests and responses are the wire contract's.
type (
	CloseScopeRequest = client.CloseScopeRequest
	RegisterRequest   = client.RegisterRequest
	RegisterResult    = client.RegisterResult
)

// RegisterTools adds tools to the location layer: ToolRegistered events on
// the scope's subject, so every host rebuilds them. The latest registration
// of a name wins and beats the process layer; closing the scope reveals
// what it covered. All descriptors are validated before anything is
// committed.
func (e *Engine) RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error) {
	if req.Scope == "" {
		req.Scope = e.cfg.IDs.New(e.cfg.Clock())
	}
	if !validProject(req.Scope) { // the same token rule: it is a subject token
		return nil, fmt.Errorf("scope %q: letters, digits, - and _ only: %w", req.Scope, ErrInvalidRequest)
	}
	if len(req.Tools) == 0 {
		return nil, fmt.Errorf("register: no tools: %w", ErrInvalidRequest)
	}
	res := &RegisterResult{Scope: req.Scope, Identities: map[string]string{}}
	var evs []events.Event
	var errs []error
	for _, d := range req.Tools {
		d = d.WithDefaults()
		if err := d.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("tool %q: %w", d.Name, err))
			continue
		}
		if _, dup := res.Identities[d.Name]; dup {
			errs = append(errs, fmt.Errorf("tool %q registered twice in one call", d.Name))
			continue
		}
		id := d.Identity(LocationLayer, req.Scope)
		res.Identities[d.Name] = id
		evs = append(evs, events.ToolRegistered{Scope: req.Scope, Name: d.Name, Description: d.Description,
			InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, Action: d.Action, Effect: string(d.Effect), Identity: id})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("register: %w: %w", ErrInvalidRequest, err)
	}
	return res, e.commitRegistry(ctx, req.Scope, evs)
}

// CloseScope revokes exactly the scope's registrations.
func (e *Engine) CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error) {
	if !validProject(req.Scope) {
		return nil, fmt.Errorf("scope %q: %w", req.Scope, ErrInvalidRequest)
	}
	return &req, e.commitRegistry(ctx, req.Scope, []events.Event{events.ScopeClosed{Scope: req.Scope}})
}

func (e *Engine) commitRegistry(ctx context.Context, scope string, evs []events.Event) error {
	if err := e.commitSubject(ctx, events.RegistrySubject(scope), events.KindRegistry, evs); err != nil {
		return fmt.Errorf("registry scope %s: %w", scope, err)
	}
	return nil
}

// commitSubject commits evs to a subject outside runs (a registry scope,
// a project's grants, the output sweeps), expecting the subject's last
// sequence as read just before; after a lost race it reads it again (three
// times at most). The commit is folded here at once.
func (e *Engine) commitSubject(ctx context.Context, subject string, kind events.Kind, evs []events.Event) error {
	for attempt := 0; ; attempt++ {
		last, err := e.log.SubjectLastSeq(ctx, subject)
		if err != nil {
			return err
		}
		now := e.cfg.Clock()
		c := &events.Commit{ID: e.cfg.IDs.New(now), Kind: kind, At: now.UTC(), Host: e.cfg.Host, Events: evs}
		seq, err := e.log.CommitTo(ctx, subject, c, last)
		e.observeCommit(c, err)
		if errors.Is(err, step.ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return err
		}
		return e.proj.ApplyOwn(seq, c)
	}
}

// Install gives this host implementations of location-layer tools of a
// scope: a call of one of them runs here. A host without the implementation
// of a registration answers calls with "Tool is not installed on this host",
// and never runs anything else in its place.
func (e *Engine) Install(scope string, tools ...*executor.Tool) {
	for _, t := range tools {
		e.installed.Store(t.Descriptor().Identity(LocationLayer, scope), t)
	}
	e.installVer.Add(1)
}

// effectiveTool is one entry of the effective registry.
type effectiveTool struct {
	desc     descriptor.Descriptor
	identity string
	impl     *executor.Tool // nil: not installed on this host
}

// registryCache is the effective registry as of a registry version and an
// install version.
type registryCache struct {
	regVer, instVer uint64
	tools           map[string]effectiveTool
}

// effective returns the effective registry: the process layer overlaid by
// the location layer's registrations in force. It is rebuilt only when the
// layer or this host's installs changed; callers must not modify it. It
// calls the projector: not from inside a view.
func (e *Engine) effective() map[string]effectiveTool {
	regVer, instVer := e.proj.RegistryVersion(), e.installVer.Load()
	if c := e.regCache.Load(); c != nil && c.regVer == regVer && c.instVer == instVer {
		return c.tools
	}
	tools, regVer := e.buildEffective()
	e.regCache.Store(&registryCache{regVer: regVer, instVer: instVer, tools: tools})
	return tools
}

func (e *Engine) buildEffective() (map[string]effectiveTool, uint64) {
	out := map[string]effectiveTool{}
	for _, t := range e.tools.Tools() {
		out[t.Name()] = effectiveTool{desc: t.Descriptor(), identity: t.Identity(), impl: t}
	}
	location, regVer := e.proj.Registry()
	for name, r := range location {
		et := effectiveTool{identity: r.Identity, desc: descriptor.Descriptor{Name: name, Description: r.Description,
			InputSchema: r.InputSchema, OutputSchema: r.OutputSchema, Action: r.Action, Effect: descriptor.EffectClass(r.Effect)}}
		if v, ok := e.installed.Load(r.Identity); ok {
			et.impl = v.(*executor.Tool)
		}
		out[name] = et
	}
	return out, regVer
}

// shown reports whether identity is still the effective registration of
// name: the tool the model was shown is the one that would run.
func shown(reg map[string]effectiveTool, name, identity string) bool {
	et, ok := reg[name]
	return ok && et.identity == identity
}

// resolveTool returns the implementation of the tool the model was shown as
// identity, or the model-visible reason it cannot run: no effective
// registration or another identity (stale), or none installed here.
func resolveTool(reg map[string]effectiveTool, name, identity string) (*executor.Tool, string) {
	if !shown(reg, name, identity) {
		return nil, executor.StaleTool(name)
	}
	et := reg[name]
	if et.impl == nil {
		return nil, executor.NotInstalled(name)
	}
	return et.impl, ""
}

// sortedTools returns the effective registry ordered by name.
func sortedTools(reg map[string]effectiveTool) []effectiveTool {
	out := make([]effectiveTool, 0, len(reg))
	for _, t := range reg {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b effectiveTool) int {
		switch {
		case a.desc.Name < b.desc.Name:
			return -1
		case a.desc.Name > b.desc.Name:
			return 1
		}
		return 0
	})
	return out
}
