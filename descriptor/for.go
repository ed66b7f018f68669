package descriptor

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
)

// Option adjusts the descriptor built by For.
type Option func(*Descriptor)

// WithAction sets the permission action (default: DefaultAction(name)).
func WithAction(action string) Option {
	return func(d *Descriptor) { d.Action = action }
}

// WithEffect sets the effect class (default: SideEffecting).
func WithEffect(e EffectClass) Option {
	return func(d *Descriptor) { d.Effect = e }
}

// For derives a descriptor from the Go types of a tool's input and output.
//
// Schemas are reflected from the types by github.com/invopop/jsonschema, self-contained
// (no $ref, no $defs, no $id): a field is a property named by its json tag; it is
// required unless its tag says omitempty or omitzero; every object forbids additional
// properties; `jsonschema:"..."` tags add constraints and descriptions. In must reflect
// to an object (a struct or a map with string keys); Out may be any JSON-encodable
// type, including string. The same types always give byte-identical schemas.
//
// Recursive types are refused (a self-contained schema of one would be infinite), as
// are types JSON cannot encode (channels, functions, complex numbers).
func For[In, Out any](name, description string, opts ...Option) (Descriptor, error) {
	d, _, _, err := ForCompiled[In, Out](name, description, opts...)
	return d, err
}

// ForCompiled is For that also returns the descriptor's compiled input and
// output schemas, so a caller that needs them compiles nothing again.
func ForCompiled[In, Out any](name, description string, opts ...Option) (d Descriptor, in, out *Schema, err error) {
	if err := ValidateName(name); err != nil {
		return Descriptor{}, nil, nil, err
	}
	inRaw, err := schemaOf(reflect.TypeFor[In]())
	if err != nil {
		return Descriptor{}, nil, nil, fmt.Errorf("tool %s: input: %w", name, err)
	}
	outRaw, err := schemaOf(reflect.TypeFor[Out]())
	if err != nil {
		return Descriptor{}, nil, nil, fmt.Errorf("tool %s: output: %w", name, err)
	}
	d = Descriptor{Name: name, Description: description, InputSchema: inRaw, OutputSchema: outRaw}
	for _, o := range opts {
		o(&d)
	}
	d = d.WithDefaults()
	if in, out, err = d.Schemas(); err != nil {
		return Descriptor{}, nil, nil, err
	}
	return d, in, out, nil
}

// schemaOf reflects t into a self-contained JSON Schema.
func schemaOf(t reflect.Type) (raw json.RawMessage, err error) {
	if t == nil {
		return nil, fmt.Errorf("%w: interface type without a concrete type", ErrUnsupportedType)
	}
	if err := checkType(t, nil); err != nil {
		return nil, err
	}
	defer func() {
		// The reflector panics on kinds it does not know; checkType should have
		// caught them all, this keeps a missed one an error.
		if v := recover(); v != nil {
			raw, err = nil, fmt.Errorf("%w: %s: %v", ErrUnsupportedType, t, v)
		}
	}()
	r := jsonschema.Reflector{
		Anonymous:      true, // no $id: the schema is identified by its tool, not a Go package
		DoNotReference: true,
		ExpandedStruct: true,
	}
	b, err := json.Marshal(r.ReflectFromType(t))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnsupportedType, t, err)
	}
	return b, nil
}

// checkType refuses what the reflector cannot turn into a finite schema: recursive
// types (with DoNotReference it would recurse forever) and kinds JSON cannot encode.
// Types with their own JSONSchema method are trusted as they are.
func checkType(t reflect.Type, path []reflect.Type) error {
	if slices.Contains(path, t) {
		return fmt.Errorf("%w: recursive type %s", ErrUnsupportedType, chain(append(path, t)))
	}
	if customSchema(t) {
		return nil
	}
	path = append(path, t)
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128,
		reflect.UnsafePointer, reflect.Uintptr, reflect.Invalid:
		return fmt.Errorf("%w: %s", ErrUnsupportedType, t)
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return checkType(t.Elem(), path)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" || f.Tag.Get("jsonschema") == "-" {
				continue
			}
			if err := checkType(f.Type, path); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	customType      = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()
	customAliasType = reflect.TypeFor[interface{ JSONSchemaAlias() any }]()
)

func customSchema(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		return t.Implements(customType) || t.Implements(customAliasType)
	}
	return t.Implements(customType) || reflect.PointerTo(t).Implements(customType) ||
		t.Implements(customAliasType) || reflect.PointerTo(t).Implements(customAliasType)
}

func chain(path []reflect.Type) string {
	names := make([]string, len(path))
	for i, t := range path {
		names[i] = t.String()
	}
	return strings.Join(names, " -> ")
}
