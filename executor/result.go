package executor

import (
	"encoding/json"
	"strings"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// Part types.
const (
	PartText  = "text"
	PartMedia = "media"
)

// Part is one piece of a tool's content: text, or media (MIME type and bytes).
type Part struct {
	Type string `json:"type"` // PartText or PartMedia
	Text string `json:"text,omitempty"`
	MIME string `json:"mime,omitempty"`
	Data []byte `json:"data,omitempty"`
}

// Result is what one call produced, whole: nothing here is cut. IsError results are
// still results the model sees; they never end a run.
type Result struct {
	Parts      []Part          `json:"parts"`
	Structured json.RawMessage `json:"structured,omitempty"` // the tool's output value as JSON, when it is not plain text
	IsError    bool            `json:"is_error"`
	// State is the run state the call sets (see [StateSetter]); it is
	// committed as StateCommand events with the result, never shown to the
	// model.
	State []StateChange `json:"-"`
	// Acted is what the call reported of what its tool observes (see
	// [Call.Acted]); the engine records it with the result, never shows it
	// to the model. Zero for a failed call.
	Acted Acted `json:"-"`
	// Sandbox is what the sandbox enforced on the command the call ran
	// (see [Call.Contained]); nil when it ran none sandboxed. The engine
	// records it with the result.
	Sandbox *sandbox.Enforced `json:"-"`
	// Refused is what the call's sandbox refused it, when it refused
	// something (see [Refusal]): a file tool's own refusal, or read from the
	// output of a sandboxed command that failed. Nil otherwise.
	Refused *Refusal `json:"-"`
	// Failed reports that the call's output says it failed (see
	// [Failer]); an error result (IsError) failed too.
	Failed bool `json:"-"`
}

// StateChange sets one key of the run's state to a JSON value.
type StateChange struct {
	Key   string
	Value json.RawMessage
}

// StateSetter is implemented by tool outputs that set run state: todowrite's
// list is committed as the run's "todos" in the same settle commit as its
// result. A failed call sets nothing.
type StateSetter interface {
	StateChanges() []StateChange
}

// Text returns the text parts joined with "\n"; media parts are left out.
func (r Result) Text() string {
	switch n := len(r.Parts); {
	case n == 1 && r.Parts[0].Type == PartText:
		return r.Parts[0].Text
	case n == 0:
		return ""
	}
	var b strings.Builder
	first := true
	for _, p := range r.Parts {
		if p.Type != PartText {
			continue
		}
		if !first {
			b.WriteByte('\n')
		}
		first = false
		b.WriteString(p.Text)
	}
	return b.String()
}

// TextResult is a successful result holding one text part.
func TextResult(text string) Result {
	return Result{Parts: []Part{{Type: PartText, Text: text}}}
}

// ErrorResult is a failed result holding msg, the text the model reads.
func ErrorResult(msg string) Result {
	return Result{Parts: []Part{{Type: PartText, Text: msg}}, IsError: true}
}
