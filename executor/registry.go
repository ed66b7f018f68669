package executor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/stepgate/stepgate/descriptor"
)

// Registry holds the tools a host installs in code: the process layer. It is safe
// for concurrent use; the zero value is an empty registry.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
}

// NewRegistry returns a registry holding tools, or an error naming every nil tool,
// invalid name and duplicate name among them.
func NewRegistry(tools ...*Tool) (*Registry, error) {
	r := &Registry{tools: make(map[string]*Tool, len(tools))}
	if err := r.Register(tools...); err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds tools, all or nothing: every tool is checked (not nil, valid name,
// name not already registered nor repeated in tools) before any is added. The error
// joins every problem found.
func (r *Registry) Register(tools ...*Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if t == nil {
			errs = append(errs, fmt.Errorf("tool %d: %w", i, ErrNilTool))
			continue
		}
		name := t.desc.Name
		if err := descriptor.ValidateName(name); err != nil {
			errs = append(errs, err)
			continue
		}
		if seen[name] || r.tools[name] != nil {
			errs = append(errs, fmt.Errorf("%w: %s", ErrDuplicateTool, name))
		}
		seen[name] = true
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if r.tools == nil {
		r.tools = make(map[string]*Tool, len(tools))
	}
	for _, t := range tools {
		r.tools[t.desc.Name] = t
	}
	return nil
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Tools returns every registered tool, sorted by name. The slice is the caller's.
func (r *Registry) Tools() []*Tool {
	r.mu.RLock()
	out := make([]*Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Tool) int { return strings.Compare(a.desc.Name, b.desc.Name) })
	return out
}
