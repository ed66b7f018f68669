package jsonfast

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse decodes one JSON document into the values encoding/json gives
// for an `any` target with UseNumber (map[string]any, []any, string,
// json.Number, bool, nil) in one pass, without reflection. It runs on every
// call's arguments, so it is built for speed; ok is false for anything that
// is not JSON, and then the caller asks encoding/json, whose error text the
// model sees. FuzzParseAny holds the two to the same values.
//
// dups reports an object with a key twice: the value keeps the last, as
// encoding/json's does, but a typed decode also checks the earlier ones.
func Parse(b []byte) (v any, dups, ok bool) {
	p := Scanner{b: b}
	p.space()
	v, ok = p.value(0)
	if !ok {
		return nil, false, false
	}
	p.space()
	return v, p.dups, p.i == len(p.b)
}

// maxDepth is encoding/json's nesting limit: at most this many containers
// one inside another.
const maxDepth = 10000

// value decodes the value at the scanner as Parse does; depth is the
// nesting it is found at (1 for an object's member).
func (p *Scanner) value(depth int) (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case (c == '{' || c == '[') && depth >= maxDepth:
		return nil, false // a container more than maxDepth deep
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

func (p *Scanner) object(depth int) (any, bool) {
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

func (p *Scanner) array(depth int) (any, bool) {
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

func (p *Scanner) number() (any, bool) {
	start := p.i
	if !p.skipNumber() {
		return nil, false
	}
	return json.Number(p.b[start:p.i]), true
}

// str decodes a string as encoding/json does: escapes resolved, invalid
// UTF-8 and lone surrogates replaced by U+FFFD, control characters refused.
func (p *Scanner) str() (string, bool) {
	p.i++ // "
	start := p.i
	p.plainRun()
	if p.i < len(p.b) && p.b[p.i] == '"' { // no escapes and plain ASCII
		s := string(p.b[start:p.i])
		p.i++
		return s, true
	}
	// One allocation: the decoded text is about as long as the raw text up
	// to the closing quote (shorter for escapes, longer only for invalid
	// UTF-8), and the builder's string is its buffer.
	var sb strings.Builder
	sb.Grow(p.closing() - start)
	sb.Write(p.b[start:p.i])
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return sb.String(), true
		case c < 0x20:
			return "", false
		case c == '\\':
			r, ok := p.escape()
			if !ok {
				return "", false
			}
			sb.WriteRune(r)
		default: // non-ASCII
			r, size := utf8.DecodeRune(p.b[p.i:])
			p.i += size
			sb.WriteRune(r) // RuneError for invalid bytes, as encoding/json
		}
		from := p.i
		p.plainRun()
		sb.Write(p.b[from:p.i])
	}
	return "", false
}

// closing returns where the quote that closes the string the scanner is in
// stands (escaped quotes skipped), or the text's end; the string's bytes
// from its start to the scanner hold no backslash.
func (p *Scanner) closing() int {
	for i := p.i; ; {
		j := bytes.IndexByte(p.b[i:], '"')
		if j < 0 {
			return len(p.b)
		}
		q, n := i+j, 0
		for k := q - 1; k >= p.i && p.b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// escape decodes one backslash escape starting at p.i.
func (p *Scanner) escape() (rune, bool) {
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

func (p *Scanner) hex4() (rune, bool) {
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
