package events

import "encoding/binary"

// validJSON reports whether b is exactly one JSON value, as json.Valid does,
// in one pass without allocating: raw fields (a call's arguments, a
// structured result) are checked on every commit. FuzzValidJSON holds it to
// json.Valid.
func validJSON(b []byte) bool {
	v := validator{b: b}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.i == len(b)
}

// maxValidDepth is encoding/json's nesting limit.
const maxValidDepth = 10000

type validator struct {
	b []byte
	i int
}

func (v *validator) space() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *validator) literal(word string) bool {
	if len(v.b)-v.i < len(word) || string(v.b[v.i:v.i+len(word)]) != word {
		return false
	}
	v.i += len(word)
	return true
}

func (v *validator) value(depth int) bool {
	if v.i >= len(v.b) || depth > maxValidDepth {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '{':
		return v.container('}', depth+1, true)
	case c == '[':
		return v.container(']', depth+1, false)
	case c == '"':
		return v.str()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	}
	return false
}

// container checks an object (keyed) or an array up to its closing byte.
func (v *validator) container(end byte, depth int, keyed bool) bool {
	v.i++
	v.space()
	if v.i < len(v.b) && v.b[v.i] == end {
		v.i++
		return true
	}
	for {
		v.space()
		if keyed {
			if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
				return false
			}
			v.space()
			if v.i >= len(v.b) || v.b[v.i] != ':' {
				return false
			}
			v.i++
			v.space()
		}
		if !v.value(depth) {
			return false
		}
		v.space()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case end:
			v.i++
			return true
		default:
			return false
		}
	}
}

func (v *validator) digits() bool {
	start := v.i
	for v.i < len(v.b) && v.b[v.i] >= '0' && v.b[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}

func (v *validator) number() bool {
	if v.b[v.i] == '-' {
		v.i++
	}
	switch {
	case v.i < len(v.b) && v.b[v.i] == '0':
		v.i++
	case v.i < len(v.b) && v.b[v.i] >= '1' && v.b[v.i] <= '9':
		v.digits()
	default:
		return false
	}
	if v.i < len(v.b) && v.b[v.i] == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if v.i < len(v.b) && (v.b[v.i] == 'e' || v.b[v.i] == 'E') {
		v.i++
		if v.i < len(v.b) && (v.b[v.i] == '+' || v.b[v.i] == '-') {
			v.i++
		}
		return v.digits()
	}
	return true
}

// str checks a string: escapes well formed, no control characters. Invalid
// UTF-8 is accepted, as json.Valid accepts it.
func (v *validator) str() bool {
	v.i++
	for v.i < len(v.b) {
		if v.i+8 <= len(v.b) && plain8(binary.LittleEndian.Uint64(v.b[v.i:])) {
			v.i += 8
			continue
		}
		c := v.b[v.i]
		switch {
		case c == '"':
			v.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if v.i+1 >= len(v.b) {
				return false
			}
			switch v.b[v.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i += 2
			case 'u':
				if v.i+6 > len(v.b) {
					return false
				}
				for _, h := range v.b[v.i+2 : v.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				v.i += 6
			default:
				return false
			}
		default:
			v.i++
		}
	}
	return false
}
