package events

import (
	"bytes"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// unmarshalFast decodes a stored commit straight from its bytes, without
// reflection, when they have the shape this package writes: ok is false
// for anything else (an escaped or repeated name, a value of another kind,
// bytes that are not JSON), and [Unmarshal] then decodes it the general
// way, with encoding/json, which also gives any error. What it accepts it
// decodes exactly as that way does (FuzzUnmarshalFastAgrees holds the two
// together): the envelope and the payloads every step and every run's
// start write by hand (decode_step.go, decode_start.go), the other payloads
// through decodeEvent, each from its own bytes.
//
// The figures behind it (see jsonfast's doc): a rebuild (engine bench w5)
// spent about 80% of its CPU in encoding/json, the envelope and then every
// payload decoded again; BenchmarkUnmarshal reads a step commit about 5
// times faster than BenchmarkUnmarshalEncodingJSON, with 19 allocations
// instead of 76.
func unmarshalFast(b []byte) (*Commit, bool) {
	d := decoder{p: jsonfast.NewScanner(b)}
	c := &Commit{}
	d.object(1, func(name []byte) bool {
		switch string(name) {
		case "id":
			d.str(&c.ID)
		case "run":
			d.str(&c.Run)
		case "step":
			d.int(&c.Step)
		case "kind":
			d.sym((*string)(&c.Kind))
		case "at":
			d.time(&c.At)
		case "host":
			d.str(&c.Host)
		case "prev":
			d.str(&c.Prev)
		case "events":
			d.events(c)
		default:
			return false
		}
		return true
	})
	if d.bad || !d.p.End() {
		return nil, false
	}
	if c.Events == nil { // absent or null: Unmarshal makes every commit's
		c.Events = []Event{}
	}
	return c, true
}

// events reads the commit's array of events.
func (d *decoder) events(c *Commit) {
	if d.bad {
		return
	}
	if d.p.Null() {
		c.Events = nil
		return
	}
	evs := make([]Event, 0, 4)
	d.array(func() { evs = append(evs, d.event()) })
	c.Events = evs
}

// event reads one stored event: its type, version and payload. The
// payload is decoded where it stands when the type and version come first
// (as this package writes them), else once they are known.
func (d *decoder) event() Event {
	if d.bad {
		return nil
	}
	if d.p.Null() {
		return Unknown{} // a zero wireEvent: no type, version 0
	}
	var (
		typ            string
		v              int
		seenT, seenV   bool
		e              Event
		hasData, later bool
		data           []byte
	)
	d.object(3, func(name []byte) bool {
		switch string(name) {
		case "type":
			d.sym(&typ)
			seenT = true
		case "v":
			d.int(&v)
			seenV = true
		case "data":
			hasData = true
			if seenT && seenV {
				e = d.payload(typ, v)
				return true
			}
			var ok bool
			if data, ok = d.p.Raw(3); !ok {
				d.bad = true
			}
			later = true
		default:
			return false
		}
		return true
	})
	switch {
	case d.bad:
		return nil
	case !hasData:
		return d.general(typ, v, nil)
	case later:
		sub := decoder{p: jsonfast.NewScanner(data)}
		e = sub.payload(typ, v)
		d.bad = sub.bad || !sub.p.End()
	}
	return e
}

// payload reads an event's payload: a step's or a start's by hand when it
// is at version 1 (the decoders read that version's fields; RunStarted's
// version 2 only adds the MCP pins, which the hand decoder declines, so a
// start that pins servers is read through decodeEvent), any other through
// decodeEvent.
func (d *decoder) payload(typ string, v int) Event {
	if v == 1 {
		switch typ {
		case TypeToolCallRequested:
			return d.toolCallRequested()
		case TypePermissionDecided:
			return d.permissionDecided()
		case TypeToolCallStarted:
			return d.toolCallStarted()
		case TypeToolResultRecorded:
			return d.toolResultRecorded()
		case TypeStepFinalized:
			return d.stepFinalized()
		case TypeRunStarted:
			return d.runStarted()
		case TypeCatalogAdvertised:
			return d.catalogAdvertised()
		}
	}
	data, ok := d.p.Raw(3)
	if !ok {
		d.bad = true
		return nil
	}
	return d.general(typ, v, bytes.Clone(data))
}

// general decodes an event with decodeEvent, as Unmarshal's general way
// does: an unknown type or version kept as it is, any other through
// encoding/json.
func (d *decoder) general(typ string, v int, data []byte) Event {
	e, err := decodeEvent(wireEvent{Type: typ, V: v, Data: data})
	if err != nil {
		d.bad = true
	}
	return e
}
