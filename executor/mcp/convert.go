package mcp

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/descriptor"
)

// DefaultMaxDescription bounds a tool's description, in bytes, as the model
// reads it: a server's description is cut there, at a character boundary,
// and ends with "…".
const DefaultMaxDescription = 4096

// Converted is one of a server's tools as the engine describes it.
type Converted struct {
	// Remote is the tool's name on the server, which calls use.
	Remote string
	// Descriptor is the tool as the model and the gate see it.
	Descriptor descriptor.Descriptor
}

// Skipped is a server tool that is not registered, and why.
type Skipped struct {
	Remote string `json:"remote"` // the name the server gave
	Name   string `json:"name"`   // the full name it would have had
	Reason string `json:"reason"` // one line
}

// Convert turns a server's tools into descriptors: named FullName(server,
// tool), the full name also the permission action; description from the
// server, bounded by maxDesc bytes (DefaultMaxDescription when ≤ 0); input
// and output schemas as the server sent them; effect class from the
// annotations only when trust is set (readOnlyHint → read_only,
// idempotentHint → idempotent, else side_effecting), side_effecting for
// every tool of an untrusted server. A tool whose full name fails the name
// rule, whose name collides with another of the server's after
// sanitising (every tool of the collision is skipped), or whose schemas do
// not compile is skipped with its reason, never converted in part. Both
// lists are sorted by name.
func Convert(server string, trust bool, tools []*sdk.Tool, maxDesc int) ([]Converted, []Skipped) {
	if maxDesc <= 0 {
		maxDesc = DefaultMaxDescription
	}
	count := map[string]int{}
	for _, t := range tools {
		if t != nil {
			count[FullName(server, t.Name)]++
		}
	}
	var out []Converted
	var skipped []Skipped
	for _, t := range tools {
		if t == nil {
			continue
		}
		name := FullName(server, t.Name)
		if count[name] > 1 {
			skipped = append(skipped, Skipped{Remote: t.Name, Name: name,
				Reason: fmt.Sprintf("%d of the server's tools are named %s after sanitising", count[name], name)})
			continue
		}
		d, err := describe(name, trust, t, maxDesc)
		if err != nil {
			skipped = append(skipped, Skipped{Remote: t.Name, Name: name, Reason: oneLine(err.Error())})
			continue
		}
		out = append(out, Converted{Remote: t.Name, Descriptor: d})
	}
	slices.SortFunc(out, func(a, b Converted) int { return strings.Compare(a.Descriptor.Name, b.Descriptor.Name) })
	slices.SortFunc(skipped, func(a, b Skipped) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Remote, b.Remote)
	})
	return out, skipped
}

// describe builds and validates one tool's descriptor.
func describe(name string, trust bool, t *sdk.Tool, maxDesc int) (descriptor.Descriptor, error) {
	if err := descriptor.ValidateName(name); err != nil {
		return descriptor.Descriptor{}, err
	}
	in, err := json.Marshal(t.InputSchema)
	if err != nil {
		return descriptor.Descriptor{}, fmt.Errorf("input schema: %w", err)
	}
	var outSchema json.RawMessage
	if t.OutputSchema != nil {
		if outSchema, err = json.Marshal(t.OutputSchema); err != nil {
			return descriptor.Descriptor{}, fmt.Errorf("output schema: %w", err)
		}
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	d := descriptor.Descriptor{
		Name:         name,
		Description:  bound(oneLineKeepBreaks(desc), maxDesc),
		InputSchema:  in,
		OutputSchema: outSchema,
		Action:       name,
		Effect:       effectOf(trust, t.Annotations),
	}
	if err := d.Validate(); err != nil {
		return descriptor.Descriptor{}, err
	}
	return d, nil
}

// effectOf maps annotations to an effect class, believed only when trusted.
func effectOf(trust bool, a *sdk.ToolAnnotations) descriptor.EffectClass {
	switch {
	case !trust || a == nil:
		return descriptor.SideEffecting
	case a.ReadOnlyHint:
		return descriptor.ReadOnly
	case a.IdempotentHint:
		return descriptor.Idempotent
	}
	return descriptor.SideEffecting
}

// bound cuts s to at most n bytes at a character boundary, ending with "…".
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ell = "…"
	cut := max(n-len(ell), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ell
}

// oneLineKeepBreaks drops the control characters of a description other
// than line breaks and tabs, and makes it valid UTF-8.
func oneLineKeepBreaks(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// warnSkipped logs each skipped tool at warn level.
func warnSkipped(log *slog.Logger, skipped []Skipped) {
	for _, s := range skipped {
		log.Warn("mcp: tool skipped", "tool", s.Remote, "name", s.Name, "reason", s.Reason)
	}
}
