package jsonfast

import "unicode/utf8"

// Scanner reads one JSON object member by member, for a decoder that fills
// its target straight from the bytes (the executor's flat tool inputs):
//
//	p := NewScanner(raw)
//	empty, ok := p.Object()
//	for done := empty; ok && !done; done, ok = p.MemberEnd() {
//		key, ok := p.Member()
//		val, ok := p.Scalar()
//	}
//	ok = ok && p.End()
//
// It reads only the usual shape fast: a method reports false for anything
// else (an escaped key, a null or nested value), having consumed an
// unspecified amount, and the caller decodes the general way.
type Scanner struct {
	b    []byte
	i    int
	dups bool // an object held a key twice
}

// NewScanner returns a scanner at the start of b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// Object consumes the opening of an object, and its closing too when it
// has no members (empty).
func (p *Scanner) Object() (empty, ok bool) {
	p.space()
	if !p.open('{') {
		return false, false
	}
	return p.empty('}'), true
}

// Member reads a member's name up to its value: a name of printable ASCII
// without escapes, its bytes valid until the text changes.
func (p *Scanner) Member() ([]byte, bool) {
	p.space()
	key, ok := p.plainKey()
	return key, ok && p.colon()
}

// Scalar decodes a member's value as [Parse] would when it is a string, a
// number or a boolean; null, an object or an array is declined.
func (p *Scanner) Scalar() (any, bool) {
	switch p.peek() {
	case '{', '[', 'n', 0:
		return nil, false
	}
	return p.value(1)
}

// MemberEnd consumes what follows a member: a comma (more to come) or the
// object's end (done).
func (p *Scanner) MemberEnd() (done, ok bool) { return p.next('}') }

// End reports whether nothing but white space follows.
func (p *Scanner) End() bool {
	p.space()
	return p.done()
}

// open consumes c if it is the next byte.
func (p *Scanner) open(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek returns the next byte, or 0 at the end of the text.
func (p *Scanner) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// done reports whether the whole text has been read.
func (p *Scanner) done() bool { return p.i == len(p.b) }

// space consumes white space.
func (p *Scanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *Scanner) literal(word string) bool {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// empty reports whether the container just opened closes at once with
// closer, and consumes it if so.
func (p *Scanner) empty(closer byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == closer {
		p.i++
		return true
	}
	return false
}

// colon consumes the colon after an object key, and the space around it.
func (p *Scanner) colon() bool {
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
func (p *Scanner) next(closer byte) (done, ok bool) {
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

// skipNumber consumes a number as JSON's grammar has it.
func (p *Scanner) skipNumber() bool {
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		return p.digits()
	}
	return true
}

// digits consumes one or more decimal digits.
func (p *Scanner) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// plainKey reads a string of printable ASCII without escapes and returns
// its bytes (valid until p.b changes); false for anything else, which
// str reads.
func (p *Scanner) plainKey() ([]byte, bool) {
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
