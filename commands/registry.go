package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stepgate/stepgate/client"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
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

// RegisterTools answers [Engine.RegisterTools].
func (h *registrar) RegisterTools(ctx context.Context, req RegisterRequest) (*RegisterResult, error) {
	if req.Scope == "" {
		req.Scope = h.cfg.IDs.New(h.cfg.Clock())
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
	return res, h.commitRegistry(ctx, req.Scope, evs)
}

// CloseScope answers [Engine.CloseScope].
func (h *registrar) CloseScope(ctx context.Context, req CloseScopeRequest) (*CloseScopeRequest, error) {
	if !validProject(req.Scope) {
		return nil, fmt.Errorf("scope %q: %w", req.Scope, ErrInvalidRequest)
	}
	return &req, h.commitRegistry(ctx, req.Scope, []events.Event{events.ScopeClosed{Scope: req.Scope}})
}

func (h *registrar) commitRegistry(ctx context.Context, scope string, evs []events.Event) error {
	if err := h.commitSubject(ctx, events.RegistrySubject(scope), events.KindRegistry, evs); err != nil {
		return fmt.Errorf("registry scope %s: %w", scope, err)
	}
	return nil
}

// Install answers [Engine.Install].
func (h *registrar) Install(scope string, tools ...*executor.Tool) {
	for _, t := range tools {
		h.installed.Store(t.Descriptor().Identity(LocationLayer, scope), t)
	}
	h.installVer.Add(1)
}

// effective returns the effective registry: the process layer overlaid by
// the location layer's registrations in force. It is rebuilt only when the
// layer or this host's installs changed; callers must not modify it.
func (h *registrar) effective() map[string]effectiveTool { return h.effectiveCache().tools }

// effectiveCache is the effective registry with the versions it was built
// at: the same value until the registry or the installed tools change, so
// what is computed from it (a run's catalogue) may be kept beside it.
func (h *registrar) effectiveCache() *registryCache {
	regVer, instVer := h.proj.RegistryVersion(), h.installVer.Load()
	if c := h.regCache.Load(); c != nil && c.regVer == regVer && c.instVer == instVer {
		return c
	}
	tools, regVer := h.buildEffective()
	c := &registryCache{regVer: regVer, instVer: instVer, tools: tools}
	h.regCache.Store(c)
	return c
}

func (h *registrar) buildEffective() (map[string]effectiveTool, uint64) {
	out := map[string]effectiveTool{}
	for _, t := range h.tools.Tools() {
		out[t.Name()] = effectiveTool{desc: t.Descriptor(), identity: t.Identity(), impl: t}
	}
	location, regVer := h.proj.Registry()
	for name, r := range location {
		et := effectiveTool{identity: r.Identity, desc: descriptor.Descriptor{Name: name, Description: r.Description,
			InputSchema: r.InputSchema, OutputSchema: r.OutputSchema, Action: r.Action, Effect: descriptor.EffectClass(r.Effect)}}
		if v, ok := h.installed.Load(r.Identity); ok {
			et.impl = v.(*executor.Tool)
		}
		out[name] = et
	}
	return out, regVer
}
