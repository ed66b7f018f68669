package events

import (
	"encoding/json"
	"fmt"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// The payloads written on every step encode themselves through jsonfast,
// without reflection: the hot path of a commit (see WritePayload). The
// output decodes to the same value as encoding/json's; a property test holds
// them together.

func (e ToolCallRequested) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("call_id", e.CallID)
	w.String("tool", e.Tool)
	if len(e.Args) > 0 {
		w.Raw("args", e.Args)
	}
	if e.Identity != "" {
		w.String("identity", e.Identity)
	}
	w.EndObject()
}

func (r Rule) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("action", r.Action)
	w.String("resource", r.Resource)
	w.String("effect", r.Effect)
	if r.Source != "" {
		w.String("source", r.Source)
	}
	if r.TicketTTL != "" {
		w.String("ticket_ttl", r.TicketTTL)
	}
	w.EndObject()
}

func (r Request) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("action", r.Action)
	w.Strings("resources", r.Resources)
	if len(r.Save) > 0 {
		w.Strings("save", r.Save)
	}
	if r.Ask {
		w.Bool("ask", true)
	}
	if r.Root != "" {
		w.String("root", r.Root)
	}
	w.EndObject()
}

func (e PermissionDecided) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("call_id", e.CallID)
	w.String("verdict", e.Verdict)
	if e.Reason != "" {
		w.String("reason", e.Reason)
	}
	if e.Rule != nil {
		w.Field("rule")
		e.Rule.writeJSON(w)
	}
	if len(e.Requests) > 0 {
		w.Field("requests")
		w.BeginArray()
		for _, r := range e.Requests {
			r.writeJSON(w)
		}
		w.EndArray()
	}
	if e.Observed != "" {
		w.String("observed", e.Observed)
	}
	if len(e.Paths) > 0 {
		w.Field("paths")
		w.BeginArray()
		for _, p := range e.Paths {
			w.BeginObject()
			w.String("path", p.Path)
			w.String("real", p.Real)
			w.EndObject()
		}
		w.EndArray()
	}
	w.EndObject()
}

func (e ToolCallStarted) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("call_id", e.CallID)
	w.Int("attempt", int64(e.Attempt))
	w.EndObject()
}

func (p Part) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("type", p.Type)
	if p.Text != "" {
		w.String("text", p.Text)
	}
	if p.MIME != "" {
		w.String("mime", p.MIME)
	}
	if len(p.Data) > 0 {
		w.Base64("data", p.Data)
	}
	w.EndObject()
}

func (e ToolResultRecorded) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.String("call_id", e.CallID)
	w.Field("parts")
	if e.Parts == nil {
		w.Null()
	} else {
		w.BeginArray()
		for _, p := range e.Parts {
			p.writeJSON(w)
		}
		w.EndArray()
	}
	if len(e.Structured) > 0 {
		w.Raw("structured", e.Structured)
	}
	if e.IsError {
		w.Bool("is_error", true)
	}
	if len(e.Files) > 0 {
		w.Strings("files", e.Files)
	}
	if e.Found != "" {
		w.String("found", e.Found)
	}
	if e.Left != "" {
		w.String("left", e.Left)
	}
	if e.Sandbox != nil { // rare: a sandboxed command's result; the general encoder is fast enough
		data, err := json.Marshal(e.Sandbox)
		if err != nil {
			w.Fail(fmt.Errorf("encode a result's sandbox record: %w", err))
			return
		}
		w.Raw("sandbox", data)
	}
	w.EndObject()
}

func (e StepFinalized) writeJSON(w *jsonfast.Writer) {
	w.BeginObject()
	w.Int("calls", int64(e.Calls))
	w.EndObject()
}
