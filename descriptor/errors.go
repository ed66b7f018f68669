package descriptor

import "errors"

var (
	// ErrInvalidName is wrapped by every error about a tool name that breaks the name
	// rule. Its text is capitalised because ValidateName's error is model-visible.
	//lint:ignore ST1005 the text is model-visible and spelled by the spec
	ErrInvalidName = errors.New("Invalid tool name")
	// ErrInvalidAction is wrapped when a descriptor's permission action is malformed.
	ErrInvalidAction = errors.New("invalid permission action")
	// ErrInvalidEffect is wrapped when a descriptor's effect class is not one of the three.
	ErrInvalidEffect = errors.New("invalid effect class")
	// ErrInvalidSchema is wrapped when a JSON Schema cannot be parsed or compiled,
	// or an input schema does not describe an object.
	ErrInvalidSchema = errors.New("invalid JSON Schema")
	// ErrUnsupportedType is wrapped when For cannot derive a schema from a Go type.
	ErrUnsupportedType = errors.New("unsupported Go type for a tool schema")
)
