package executor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// parseAny decodes one JSON document into the values encoding/json gives
// for an `any` target with UseNumber (map[string]any, []any, string,
// json.Number, bool, nil) in one pass, without reflection. It runs on every
// call's arguments, so it is built for speed; ok is false for anything that
// is not JSON, and then the caller asks encoding/json, whose error text the
// model sees. FuzzParseAny holds the two to the same values.
//
// dups reports an object with a key twice: the value keeps the last, as
// encoding/json's does, but a typed decode also checks the earlier ones.
func parseAny(b []byte) (v any, dups, ok bool) {
	p := jsonParser{b: b}
	p.space()
	v, ok = p.value(0)
	if !ok {
		return nil, false, false
	}
	p.space()
	return v, p.dups, p.i == len(p.b)
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

type jsonParser struct {
	b    []byte
	i    int
	dups bool // an object held a key twice
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(word string) bool {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

func (p *jsonParser) value(depth int) (any, bool) {
	if p.i >= len(p.b) || depth > maxDepth {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		str, ok := p.str()
		return str, ok
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) object(depth int) (any, bool) {
	p.i++ // {
	m := map[string]any{}
	if p.empty('}') {
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok || !p.colon() {
			return nil, false
		}
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		if _, seen := m[k]; seen {
			p.dups = true
		}
		m[k] = v
		switch done, ok := p.next('}'); {
		case !ok:
			return nil, false
		case done:
			return m, true
		}
	}
}

func (p *jsonParser) array(depth int) (any, bool) {
	p.i++ // [
	a := []any{}
	if p.empty(']') {
		return a, true
	}
	for {
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		switch done, ok := p.next(']'); {
		case !ok:
			return nil, false
		case done:
			return a, true
		}
	}
}

// empty reports whether the container just opened closes at once with
// closer, and consumes it if so.
func (p *jsonParser) empty(closer byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == closer {
		p.i++
		return true
	}
	return false
}

// colon consumes the colon after an object key, and the space around it.
func (p *jsonParser) colon() bool {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != ':' {
		return false
	}
	p.i++
	p.space()
	return true
}

// next consumes what follows a container's member: a comma (more to come)
// or closer (done); ok is false for anything else.
func (p *jsonParser) next(closer byte) (done, ok bool) {
	p.space()
	if p.i >= len(p.b) {
		return false, false
	}
	switch p.b[p.i] {
	case ',':
		p.i++
		return false, true
	case closer:
		p.i++
		return true, true
	}
	return false, false
}

func (p *jsonParser) number() (any, bool) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

// digits consumes one or more decimal digits.
func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// plainKey reads a string of printable ASCII without escapes and returns
// its bytes (valid until p.b changes); false for anything else, which
// str reads.
func (p *jsonParser) plainKey() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for i := start; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '"':
			p.i = i + 1
			return p.b[start:i], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str decodes a string as encoding/json does: escapes resolved, invalid
// UTF-8 and lone surrogates replaced by U+FFFD, control characters refused.
func (p *jsonParser) str() (string, bool) {
	p.i++ // "
	start := p.i
	p.plainRun()
	if p.i < len(p.b) && p.b[p.i] == '"' { // no escapes and plain ASCII
		s := string(p.b[start:p.i])
		p.i++
		return s, true
	}
	// The decoded text is no longer than the raw text up to the next quote
	// (the closing one, unless a quote is escaped).
	hint := bytes.IndexByte(p.b[p.i:], '"')
	buf := append(make([]byte, 0, p.i-start+max(hint, 0)), p.b[start:p.i]...)
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return string(buf), true
		case c < 0x20:
			return "", false
		case c == '\\':
			r, ok := p.escape()
			if !ok {
				return "", false
			}
			buf = utf8.AppendRune(buf, r)
		default: // non-ASCII
			r, size := utf8.DecodeRune(p.b[p.i:])
			p.i += size
			buf = utf8.AppendRune(buf, r) // RuneError for invalid bytes, as encoding/json
		}
		from := p.i
		p.plainRun()
		buf = append(buf, p.b[from:p.i]...)
	}
	return "", false
}

// plainRun advances past bytes a string holds as they are: printable ASCII
// other than '"' and '\\', eight at a time where it can.
func (p *jsonParser) plainRun() {
	for p.i+8 <= len(p.b) && plain8(binary.LittleEndian.Uint64(p.b[p.i:])) {
		p.i += 8
	}
	for p.i < len(p.b) {
		if c := p.b[p.i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return
		}
		p.i++
	}
}

// escape decodes one backslash escape starting at p.i.
func (p *jsonParser) escape() (rune, bool) {
	if p.i+1 >= len(p.b) {
		return 0, false
	}
	c := p.b[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return 0, false
		}
		if utf16.IsSurrogate(r) {
			// A pair makes one rune; a lone surrogate is U+FFFD.
			if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				if r2, ok := p.hex4(); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						return dec, true
					}
				}
				p.i = save
			}
			return utf8.RuneError, true
		}
		return r, true
	}
	return 0, false
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

// plain8 reports whether none of the 8 bytes packed in x needs a string's
// slow path: each is printable ASCII other than '"' and '\\'. It tests the 8
// at once. (The log's encoder has the same test; the two packages may not
// share code, see DESIGN.md §1.)
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (x - ones*0x20) & ^x & highs // a byte below 0x20 (exact when no byte has its high bit)
	q := x ^ (ones * '"')
	quote := (q - ones) & ^q & highs
	bs := x ^ (ones * '\\')
	backslash := (bs - ones) & ^bs & highs
	return (x&highs)|control|quote|backslash == 0
}
