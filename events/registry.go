package events

import "encoding/json"

// Wire names of the registry's events.
const (
	TypeToolRegistered = "ToolRegistered"
	TypeScopeClosed    = "ScopeClosed"
)

// ToolRegistered adds a tool to the location layer of the registry, in a
// scope (committed on the scope's subject, so every host rebuilds it). The
// latest active registration of a name wins, and beats the process layer.
type ToolRegistered struct {
	Scope        string          `json:"scope"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Action       string          `json:"action"`
	Effect       string          `json:"effect"`
	Identity     string          `json:"identity"`
}

// ScopeClosed revokes exactly the scope's registrations, revealing what
// they covered.
type ScopeClosed struct {
	Scope string `json:"scope"`
}

// EventType implements [Event].
func (ToolRegistered) EventType() string { return TypeToolRegistered }

// EventType implements [Event].
func (ScopeClosed) EventType() string { return TypeScopeClosed }
