package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// Version returns the newest schema version this build reads and writes for
// an event type, or 0 for a type it does not know. RunStarted is at 2 (a
// start that pins MCP servers) and TicketResolved at 2 (an approval with
// edited arguments, [ArgsEdit]); without those fields each is still written
// at 1 (see [EventVersion]).
func Version(eventType string) int {
	switch eventType {
	case TypeRunStarted, TypeTicketResolved:
		return 2 // RunStarted 2: with MCP pins; TicketResolved 2: with an edit (see EventVersion)
	case TypeCatalogAdvertised, TypeToolCallRequested,
		TypePermissionDecided, TypeToolCallStarted, TypeToolResultRecorded,
		TypeStepFinalized, TypeRunEnded, TypeTicketIssued, TypeStepAwaiting,
		TypeApprovalSaved, TypeGrantRevoked, TypeOutputFileStored, TypeOutputFileSwept,
		TypeToolRegistered, TypeScopeClosed, TypeStateCommand, TypeStepCopied,
		TypeModelTurnRecorded:
		return 1
	}
	return 0
}

// EventVersion returns the schema version e is written at: its type's
// [Version], but 1 for a TicketResolved without an edit, so that only a
// resolution a build before edits must not act on is hidden from it.
func EventVersion(e Event) int {
	switch e := e.(type) {
	case TicketResolved:
		if e.Edit == nil {
			return 1
		}
	case RunStarted:
		if len(e.MCP) == 0 {
			return 1
		}
	}
	return Version(e.EventType())
}

// wireEvent is an event as stored: its type, schema version and payload.
type wireEvent struct {
	Type string          `json:"type"`
	V    int             `json:"v"`
	Data json.RawMessage `json:"data,omitempty"`
}

// wireCommit is the stored form of a [Commit].
type wireCommit struct {
	ID     string      `json:"id"`
	Run    string      `json:"run,omitempty"`
	Step   int         `json:"step,omitempty"`
	Kind   Kind        `json:"kind"`
	At     time.Time   `json:"at"`
	Host   string      `json:"host,omitempty"`
	Prev   string      `json:"prev,omitempty"`
	Events []wireEvent `json:"events"`
}

// Marshal encodes a commit in its stored form.
func Marshal(c *Commit) ([]byte, error) {
	return Append(make([]byte, 0, 256+768*len(c.Events)), c)
}

// Append appends the stored form of c to dst (the form [Unmarshal] reads as
// wireCommit). The envelope and the hot payloads are written through
// jsonfast, without reflection; others go through encoding/json once.
func Append(dst []byte, c *Commit) ([]byte, error) {
	w := jsonfast.NewWriter(dst)
	w.BeginObject()
	w.String("id", c.ID)
	if c.Run != "" {
		w.String("run", c.Run)
	}
	if c.Step != 0 {
		w.Int("step", int64(c.Step))
	}
	w.String("kind", string(c.Kind))
	w.Time("at", c.At)
	if _, err := w.Bytes(); err != nil {
		return nil, fmt.Errorf("encode commit %s: %w", c.ID, err)
	}
	if c.Host != "" {
		w.String("host", c.Host)
	}
	if c.Prev != "" {
		w.String("prev", c.Prev)
	}
	w.Field("events")
	w.BeginArray()
	for i, e := range c.Events {
		if e == nil {
			return nil, fmt.Errorf("encode commit %s: event %d is nil: %w", c.ID, i, ErrMalformed)
		}
		typ, v := e.EventType(), EventVersion(e)
		u, unknown := e.(Unknown)
		if unknown {
			v = u.V
		}
		w.BeginObject()
		w.String("type", typ)
		w.Int("v", int64(v))
		if !unknown || len(u.Data) > 0 { // an unknown event may have no data
			w.Field("data")
			WritePayload(&w, e)
		}
		w.EndObject()
		if _, err := w.Bytes(); err != nil {
			_, err = bytesOf(&w)
			return nil, fmt.Errorf("encode commit %s event %s: %w", c.ID, typ, err)
		}
	}
	w.EndArray()
	w.EndObject()
	return w.Bytes()
}

// Unmarshal decodes a stored commit. Events of unknown types or newer
// versions become [Unknown]; malformed bytes give an error wrapping
// [ErrMalformed]. It never panics. The shapes this package writes are read
// straight from the bytes (unmarshalFast); anything else, and every error,
// comes from encoding/json (unmarshalReflect).
func Unmarshal(b []byte) (*Commit, error) {
	if c, ok := unmarshalFast(b); ok {
		return c, nil
	}
	return unmarshalReflect(b)
}

// unmarshalReflect is [Unmarshal] through encoding/json, for every input.
func unmarshalReflect(b []byte) (*Commit, error) {
	var w wireCommit
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode commit: %w: %w", ErrMalformed, err)
	}
	c := &Commit{ID: w.ID, Run: w.Run, Step: w.Step, Kind: w.Kind, At: w.At, Host: w.Host, Prev: w.Prev,
		Events: make([]Event, len(w.Events))}
	for i, we := range w.Events {
		e, err := decodeEvent(we)
		if err != nil {
			return nil, fmt.Errorf("decode commit %s event %d (%s v%d): %w: %w", w.ID, i, we.Type, we.V, ErrMalformed, err)
		}
		c.Events[i] = e
	}
	return c, nil
}

// MarshalJSON encodes the commit in its stored form.
func (c Commit) MarshalJSON() ([]byte, error) { return Marshal(&c) }

// UnmarshalJSON decodes the stored form.
func (c *Commit) UnmarshalJSON(b []byte) error {
	d, err := Unmarshal(b)
	if err != nil {
		return err
	}
	*c = *d
	return nil
}

// decodeEvent turns one stored event into its payload type. Versions older
// than the current one would be upgraded here; RunStarted's and
// TicketResolved's version 2 only add a field (MCP, Edit), so both versions
// of each decode as they are.
func decodeEvent(we wireEvent) (Event, error) {
	if we.V < 1 || we.V > Version(we.Type) {
		return Unknown(we), nil
	}
	switch we.Type {
	case TypeRunStarted:
		return decodeAs[RunStarted](we.Data)
	case TypeCatalogAdvertised:
		return decodeAs[CatalogAdvertised](we.Data)
	case TypeToolCallRequested:
		return decodeAs[ToolCallRequested](we.Data)
	case TypePermissionDecided:
		return decodeAs[PermissionDecided](we.Data)
	case TypeToolCallStarted:
		return decodeAs[ToolCallStarted](we.Data)
	case TypeToolResultRecorded:
		return decodeAs[ToolResultRecorded](we.Data)
	case TypeStepFinalized:
		return decodeAs[StepFinalized](we.Data)
	case TypeRunEnded:
		return decodeAs[RunEnded](we.Data)
	case TypeTicketIssued:
		return decodeAs[TicketIssued](we.Data)
	case TypeStepAwaiting:
		return decodeAs[StepAwaiting](we.Data)
	case TypeTicketResolved:
		return decodeAs[TicketResolved](we.Data)
	case TypeApprovalSaved:
		return decodeAs[ApprovalSaved](we.Data)
	case TypeGrantRevoked:
		return decodeAs[GrantRevoked](we.Data)
	case TypeOutputFileStored:
		return decodeAs[OutputFileStored](we.Data)
	case TypeOutputFileSwept:
		return decodeAs[OutputFileSwept](we.Data)
	case TypeToolRegistered:
		return decodeAs[ToolRegistered](we.Data)
	case TypeScopeClosed:
		return decodeAs[ScopeClosed](we.Data)
	case TypeStateCommand:
		return decodeAs[StateCommand](we.Data)
	case TypeStepCopied:
		return decodeAs[StepCopied](we.Data)
	case TypeModelTurnRecorded:
		return decodeAs[ModelTurnRecorded](we.Data)
	}
	return Unknown(we), nil
}

func decodeAs[T Event](data json.RawMessage) (Event, error) {
	var v T
	if len(data) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}
