package jsonfast

// Valid reports whether b is exactly one JSON value, as json.Valid does, in
// one pass without allocating: raw fields (a call's arguments, a structured
// result) are checked on every commit. FuzzValid holds it to json.Valid.
func Valid(b []byte) bool {
	p := Scanner{b: b}
	p.space()
	if !p.skipValue(0) {
		return false
	}
	p.space()
	return p.done()
}

func (p *Scanner) skipValue(depth int) bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case (c == '{' || c == '[') && depth >= maxDepth:
		return false // a container more than maxDepth deep
	case c == '{':
		return p.skipContainer('}', depth+1, true)
	case c == '[':
		return p.skipContainer(']', depth+1, false)
	case c == '"':
		return p.skipString()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.skipNumber()
	}
	return false
}

// skipContainer checks an object (keyed) or an array up to its closer.
func (p *Scanner) skipContainer(closer byte, depth int, keyed bool) bool {
	p.i++
	if p.empty(closer) {
		return true
	}
	for {
		p.space()
		if keyed && (p.peek() != '"' || !p.skipString() || !p.colon()) {
			return false
		}
		if !p.skipValue(depth) {
			return false
		}
		switch done, ok := p.next(closer); {
		case !ok:
			return false
		case done:
			return true
		}
	}
}

// skipString checks a string: escapes well formed, no control characters.
// Invalid UTF-8 is accepted, as json.Valid accepts it.
func (p *Scanner) skipString() bool {
	p.i++ // "
	for p.i < len(p.b) {
		p.plainRun()
		if p.i >= len(p.b) {
			return false
		}
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if !p.skipEscape() {
				return false
			}
		default: // non-ASCII, valid or not
			p.i++
		}
	}
	return false
}

// skipEscape checks one backslash escape starting at p.i; unlike escape it
// does not pair surrogates, which validity does not depend on.
func (p *Scanner) skipEscape() bool {
	if p.i+1 >= len(p.b) {
		return false
	}
	c := p.b[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		_, ok := p.hex4()
		return ok
	}
	return false
}
