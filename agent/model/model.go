// Package model is what the agent loop needs of a model provider: the
// conversation as plain data, a tool definition, one model turn, and the
// Provider interface that sends a conversation and returns the next turn.
// Providers (package agent/provider) rebuild the provider's own message
// list from a Conversation on every request, so a conversation rebuilt
// from the log produces the exact request a run would have sent.
package model

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Tool is one tool the model may call: a catalogue descriptor's name,
// description and input JSON Schema.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"` // a JSON Schema object
}

// ToolCall is one call a model turn asks for, with the provider's own id.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"` // as the model sent them (may be invalid JSON)
}

// Usage is a turn's token counts as the provider reported them.
type Usage struct {
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
}

// Turn is one model response: its text and its tool calls, in model order.
type Turn struct {
	ID    string     `json:"id,omitempty"` // the provider's response id
	Text  string     `json:"text,omitempty"`
	Calls []ToolCall `json:"calls,omitempty"`
	// Stop is the provider's stop reason ("stop", "tool_calls", "end_turn", …).
	Stop  string `json:"stop,omitempty"`
	Usage Usage  `json:"usage"`
}

// Result is what one call of a turn gave back, as the model reads it: a
// tool's output, a blocked call's reason, a rejection's feedback.
type Result struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Exchange is one turn and the results of its calls (one per call, in the
// turn's order; empty for a turn without calls).
type Exchange struct {
	Turn    Turn     `json:"turn"`
	Results []Result `json:"results,omitempty"`
}

// Conversation is everything sent to the model: the system text, the
// user's task, and the exchanges so far.
type Conversation struct {
	System    string     `json:"system,omitempty"`
	Task      string     `json:"task"`
	Exchanges []Exchange `json:"exchanges,omitempty"`
}

// Request is one model request.
type Request struct {
	Model        string
	Tools        []Tool
	Conversation Conversation
	MaxTokens    int64 // 0: the provider's default (Anthropic needs one: 4096)
	Stream       bool
	// OnText, when set, receives the turn's text as it arrives (streaming)
	// or once (not streaming).
	OnText func(string)
}

// Provider sends one request and returns the model's next turn.
type Provider interface {
	// Next sends req and returns the turn. An error the provider answered
	// is an *Error.
	Next(ctx context.Context, req Request) (Turn, error)
	// Name is the provider's name: "openai", "openai-responses", "anthropic".
	Name() string
}

// Error is a provider's refusal or failure.
type Error struct {
	Status     int           // HTTP status; 0 for a transport error or timeout
	Retryable  bool          // 429, 5xx, a timeout, a reset connection
	RetryAfter time.Duration // from the Retry-After header, when sent
	Message    string        // the provider's own message
}

// Error returns the provider's message with its status.
func (e *Error) Error() string {
	if e.Status == 0 {
		return "model provider: " + e.Message
	}
	return fmt.Sprintf("model provider: %d: %s", e.Status, e.Message)
}
