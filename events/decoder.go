package events

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/stepgate/stepgate/internal/jsonfast"
)

// decoder fills a commit's Go values straight from its stored bytes, as
// encoding/json fills them, for the shapes it reads fast (see
// [unmarshalFast]). Each method reads one value into one field; the first
// that meets anything else marks the decoder bad, the others then do
// nothing, and the caller decodes the general way. So the decoder needs to
// be right only about what it accepts, and never has to produce an error.
type decoder struct {
	p   jsonfast.Scanner
	bad bool
	// recent are the last strings read: a call's id, its tool, the text
	// of a result that echoes its argument recur within a commit, and are
	// shared instead of copied again.
	recent [4]string
	next   int // the slot of recent the next string takes
}

// maxMembers is the most known members an object may have for the decoder,
// which remembers their names to decline a name given twice: the most
// fields a type it reads has (RunStarted's).
const maxMembers = 10

// object reads an object, calling member with each member's name. member
// reads the value and reports whether it knows the name; a name it does
// not know is declined, so the commit is read the general way: it may be a
// field this decoder was not taught (a field added to a type later — a
// request's root was once dropped here, silently, because unknown names
// were skipped), or one encoding/json matches without regard to case. A
// commit of a newer writer with fields this build lacks takes the general
// path too, which ignores them. A known name given twice is declined:
// encoding/json merges the two values. depth is
// how many containers hold the members, the object included.
func (d *decoder) object(depth int, member func(name []byte) bool) {
	if d.bad {
		return
	}
	empty, ok := d.p.Object()
	if !ok {
		d.bad = true
		return
	}
	var seen [maxMembers][]byte
	n := 0
	for done := empty; !done; {
		name, ok := d.p.Member()
		if !ok {
			d.bad = true
			return
		}
		switch known := member(name); {
		case d.bad:
			return
		case !known:
			d.bad = true
			return
		case n == maxMembers || repeated(seen[:n], name):
			d.bad = true
			return
		default:
			seen[n] = name
			n++
		}
		if done, ok = d.p.MemberEnd(); !ok {
			d.bad = true
			return
		}
	}
}

// repeated reports whether name is among names.
func repeated(names [][]byte, name []byte) bool {
	for _, n := range names {
		if bytes.Equal(n, name) {
			return true
		}
	}
	return false
}

// array reads an array, calling elem to read each element.
func (d *decoder) array(elem func()) {
	if d.bad {
		return
	}
	empty, ok := d.p.Array()
	if !ok {
		d.bad = true
		return
	}
	for done := empty; !done; {
		if elem(); d.bad {
			return
		}
		if done, ok = d.p.ElemEnd(); !ok {
			d.bad = true
			return
		}
	}
}

// list reads an array into *dst as encoding/json reads one into a slice:
// null is a nil slice, [] an empty one, a null element a zero one; fill
// reads every other element.
func list[T any](d *decoder, dst *[]T, fill func(v *T)) {
	if d.bad {
		return
	}
	if d.p.Null() {
		*dst = nil
		return
	}
	out := make([]T, 0, 1)
	d.array(func() {
		var zero T
		out = append(out, zero)
		if !d.p.Null() {
			fill(&out[len(out)-1]) // in place: a local would escape to fill
		}
	})
	*dst = out
}

// ptr reads a value into a new T, or null into a nil pointer.
func ptr[T any](d *decoder, dst **T, fill func(v *T)) {
	if d.bad {
		return
	}
	if d.p.Null() {
		*dst = nil
		return
	}
	v := new(T)
	fill(v)
	*dst = v
}

// str reads a string; null leaves dst as it is, as encoding/json does.
func (d *decoder) str(dst *string) {
	if d.bad || d.p.Null() {
		return
	}
	if b, ok := d.p.Plain(); ok {
		*dst = d.share(b)
		return
	}
	s, ok := d.p.Str()
	if !ok {
		d.bad = true
		return
	}
	*dst = s
}

// share returns b as a string: one of the recent ones if it is equal,
// else a copy, which becomes recent.
func (d *decoder) share(b []byte) string {
	for _, s := range d.recent {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	d.recent[d.next] = s
	d.next = (d.next + 1) % len(d.recent)
	return s
}

// strs reads an array of strings.
func (d *decoder) strs(dst *[]string) { list(d, dst, d.str) }

// int reads an integer that fits an int; null leaves dst as it is.
func (d *decoder) int(dst *int) {
	if d.bad || d.p.Null() {
		return
	}
	n, ok := d.p.Int()
	if !ok || int64(int(n)) != n {
		d.bad = true
		return
	}
	*dst = int(n)
}

// int64 reads an integer; null leaves dst as it is.
func (d *decoder) int64(dst *int64) {
	if d.bad || d.p.Null() {
		return
	}
	n, ok := d.p.Int()
	if !ok {
		d.bad = true
		return
	}
	*dst = n
}

// bool reads true or false; null leaves dst as it is.
func (d *decoder) bool(dst *bool) {
	if d.bad || d.p.Null() {
		return
	}
	v, ok := d.p.Bool()
	if !ok {
		d.bad = true
		return
	}
	*dst = v
}

// time reads a time through time.Time's own UnmarshalJSON, which
// encoding/json calls with the string as written (and with null, which
// leaves the time as it is).
func (d *decoder) time(dst *time.Time) {
	if d.bad || d.p.Null() {
		return
	}
	q, ok := d.p.Quoted()
	if !ok || dst.UnmarshalJSON(q) != nil {
		d.bad = true
	}
}

// raw copies a value as it is written (null included, as json.RawMessage's
// UnmarshalJSON copies it); depth is how many containers hold it.
func (d *decoder) raw(dst *json.RawMessage, depth int) {
	if d.bad {
		return
	}
	b, ok := d.p.Raw(depth)
	if !ok {
		d.bad = true
		return
	}
	*dst = append(json.RawMessage(nil), b...)
}

// base64 reads a []byte as encoding/json does: a string of its standard
// base64 (line breaks ignored), or null for nil.
func (d *decoder) base64(dst *[]byte) {
	if d.bad {
		return
	}
	if d.p.Null() {
		*dst = nil
		return
	}
	s, ok := d.p.Str()
	if !ok {
		d.bad = true
		return
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, []byte(s))
	if err != nil {
		d.bad = true
		return
	}
	*dst = b[:n]
}
