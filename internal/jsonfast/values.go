package jsonfast

import "strconv"

// The methods below read one value each, for a decoder that fills typed
// fields straight from the bytes (the events of a stored commit). Each
// skips the white space before the value and reads it as encoding/json
// reads it into a field of the matching Go type; a value of another kind,
// or one it does not read fast, is declined (false, an unspecified amount
// consumed), and the caller decodes the general way.

// Array consumes the opening of an array, and its closing too when it has
// no elements (empty).
func (p *Scanner) Array() (empty, ok bool) {
	p.space()
	if !p.open('[') {
		return false, false
	}
	return p.empty(']'), true
}

// ElemEnd consumes what follows an array's element: a comma (more to come)
// or the array's end (done).
func (p *Scanner) ElemEnd() (done, ok bool) { return p.next(']') }

// Null consumes null if it is the next value.
func (p *Scanner) Null() bool {
	p.space()
	return p.peek() == 'n' && p.literal("null")
}

// Str decodes a string as [Parse] does (and encoding/json into a string):
// escapes resolved, invalid UTF-8 and lone surrogates as U+FFFD.
func (p *Scanner) Str() (string, bool) {
	p.space()
	if p.peek() != '"' {
		return "", false
	}
	return p.str()
}

// Plain returns the text of a string that holds only printable ASCII
// without escapes (valid until the text changes), so that a caller can
// match it without a copy; for any other value it returns false having
// consumed nothing but white space.
func (p *Scanner) Plain() ([]byte, bool) {
	p.space()
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i
	p.i++
	p.plainRun()
	if p.peek() != '"' {
		p.i = start
		return nil, false
	}
	p.i++
	return p.b[start+1 : p.i-1], true
}

// Quoted returns a string as it is written, quotes included, when it holds
// only printable ASCII without escapes: what an UnmarshalJSON method
// (time.Time's) is handed.
func (p *Scanner) Quoted() ([]byte, bool) {
	p.space()
	if p.peek() != '"' {
		return nil, false
	}
	start := p.i
	p.i++
	p.plainRun()
	if p.peek() != '"' {
		return nil, false
	}
	p.i++
	return p.b[start:p.i], true
}

// Bool decodes true or false.
func (p *Scanner) Bool() (v, ok bool) {
	p.space()
	switch p.peek() {
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	}
	return false, false
}

// Int decodes a number as encoding/json decodes one into an int64: an
// integer in range, without a fraction or an exponent (encoding/json
// refuses those).
func (p *Scanner) Int() (int64, bool) {
	p.space()
	start := p.i
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	if !p.skipNumber() {
		return 0, false
	}
	num := p.b[start:p.i]
	digits, neg := num, num[0] == '-'
	if neg {
		digits = num[1:]
	}
	if len(digits) > 18 { // may not fit: the exact way
		n, err := strconv.ParseInt(string(num), 10, 64)
		return n, err == nil
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' { // a fraction or an exponent
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Raw returns the bytes of the next value, checked as [Valid] checks a
// whole document, the white space around it excluded; depth is how many
// containers hold it, for encoding/json's nesting limit.
func (p *Scanner) Raw(depth int) ([]byte, bool) {
	p.space()
	start := p.i
	if !p.skipValue(depth) {
		return nil, false
	}
	return p.b[start:p.i], true
}
