// Package descriptor describes tools: what the model sees (name, description, input
// and output JSON Schema) and what the gate needs (permission action, effect class).
// A Descriptor holds no executable handle and no grant.
package descriptor

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EffectClass says what running a tool may do to the world. It decides whether a call
// may run in parallel and whether a call left in doubt by a crash may be re-run.
type EffectClass string

const (
	// ReadOnly tools change nothing.
	ReadOnly EffectClass = "read_only"
	// Idempotent tools change the world, but running them twice equals running them once.
	Idempotent EffectClass = "idempotent"
	// SideEffecting tools change the world; the default.
	SideEffecting EffectClass = "side_effecting"
)

// Valid reports whether e is one of the three effect classes.
func (e EffectClass) Valid() bool {
	switch e {
	case ReadOnly, Idempotent, SideEffecting:
		return true
	}
	return false
}

// Descriptor is a tool as the model and the gate see it.
type Descriptor struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"` // absent: the output is not checked
	Action       string          `json:"action"`                  // permission action; empty means DefaultAction(Name)
	Effect       EffectClass     `json:"effect"`                  // empty means SideEffecting
}

// DefaultAction is the permission action of a tool that names none: the tool's name,
// except that write, edit and apply_patch all ask for "edit".
func DefaultAction(name string) string {
	switch name {
	case "write", "edit", "apply_patch":
		return "edit"
	}
	return name
}

// WithDefaults returns a copy of d with an empty Action and Effect filled in.
func (d Descriptor) WithDefaults() Descriptor {
	if d.Action == "" {
		d.Action = DefaultAction(d.Name)
	}
	if d.Effect == "" {
		d.Effect = SideEffecting
	}
	return d
}

// Validate checks the name rule, the action and effect class, that the input schema
// compiles and describes an object, and that the output schema, if present, compiles.
// It returns the first problem found, wrapping one of the package's sentinels.
func (d Descriptor) Validate() error {
	_, _, err := d.Schemas()
	return err
}

// Schemas validates d as Validate does and returns its compiled input and
// output schemas (output nil when d has none), compiling each once.
func (d Descriptor) Schemas() (in, out *Schema, err error) {
	if err := ValidateName(d.Name); err != nil {
		return nil, nil, err
	}
	if d.Action != "" && !validName(d.Action) {
		return nil, nil, fmt.Errorf("tool %s: %w %q", d.Name, ErrInvalidAction, d.Action)
	}
	if d.Effect != "" && !d.Effect.Valid() {
		return nil, nil, fmt.Errorf("tool %s: %w %q", d.Name, ErrInvalidEffect, d.Effect)
	}
	if in, err = compileInputSchema(d.InputSchema); err != nil {
		return nil, nil, fmt.Errorf("tool %s: input schema: %w", d.Name, err)
	}
	if hasSchema(d.OutputSchema) {
		if out, err = Compile(d.OutputSchema); err != nil {
			return nil, nil, fmt.Errorf("tool %s: output schema: %w", d.Name, err)
		}
	}
	return in, out, nil
}

// compileInputSchema requires an object schema: the model always sends an object
// of arguments, and `null` arguments are read as {}.
func compileInputSchema(raw json.RawMessage) (*Schema, error) {
	if !hasSchema(raw) {
		return nil, fmt.Errorf("%w: missing", ErrInvalidSchema)
	}
	s, err := Compile(raw)
	if err != nil {
		return nil, err
	}
	var root struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &root); err != nil || root.Type != "object" {
		return nil, fmt.Errorf(`%w: the root must have "type": "object"`, ErrInvalidSchema)
	}
	return s, nil
}

// hasSchema reports whether raw holds a schema at all (absent and JSON null do not).
func hasSchema(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}
