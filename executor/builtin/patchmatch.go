package builtin

import (
	"strings"
	"unicode"
)

// matchPass is how strictly a hunk's lines were compared with the file's.
type matchPass int

// The passes, strictest first: a hunk is searched with each in turn, and the
// first pass that finds it wins.
const (
	passExact matchPass = iota
	passTrailingSpace
	passSpace
	passPunctuation
	passCount
)

// String is how a result names the pass.
func (m matchPass) String() string {
	switch m {
	case passTrailingSpace:
		return "ignoring trailing whitespace"
	case passSpace:
		return "ignoring leading and trailing whitespace"
	case passPunctuation:
		return "after normalising typographic punctuation"
	}
	return "exactly"
}

// normalise is a line as pass m compares it.
func (m matchPass) normalise(s string) string {
	switch m {
	case passTrailingSpace:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case passSpace:
		return strings.TrimSpace(s)
	case passPunctuation:
		return strings.TrimSpace(strings.Map(asciiPunctuation, s))
	}
	return s
}

// asciiPunctuation maps typographic punctuation to its ASCII twin: the
// hyphens and dashes U+2010–U+2015 and the minus sign U+2212 to -, the
// single quotes U+2018–U+201B to ', the double quotes U+201C–U+201F to ",
// and the no-break space U+00A0, the spaces U+2000–U+200A, U+202F, U+205F
// and U+3000 to a space. Every other rune is itself.
func asciiPunctuation(r rune) rune {
	switch {
	case r >= 0x2010 && r <= 0x2015, r == 0x2212:
		return '-'
	case r >= 0x2018 && r <= 0x201B:
		return '\''
	case r >= 0x201C && r <= 0x201F:
		return '"'
	case r == 0xA0, r >= 0x2000 && r <= 0x200A, r == 0x202F, r == 0x205F, r == 0x3000:
		return ' '
	}
	return r
}

// seekLines finds want in lines at or after from: each pass in turn over
// the whole range, the first position found in the strictest pass. With eof,
// want must be the last lines. It returns -1 when no pass finds it.
func seekLines(lines []string, from int, want []string, eof bool) (int, matchPass) {
	lo, hi := from, len(lines)-len(want)
	if eof {
		lo = hi
	}
	if lo < from || hi < lo {
		return -1, passExact
	}
	var norm []string // the file's lines as the pass compares them, from lo
	wantNorm := make([]string, len(want))
	for pass := passExact; pass < passCount; pass++ {
		norm = norm[:0]
		for _, l := range lines[lo:] {
			norm = append(norm, pass.normalise(l))
		}
		for j, w := range want {
			wantNorm[j] = pass.normalise(w)
		}
		for i := 0; i <= hi-lo; i++ {
			if equalLines(norm[i:i+len(want)], wantNorm) {
				return lo + i, pass
			}
		}
	}
	return -1, passExact
}

func equalLines(a, b []string) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// seekAnchor finds the first line at or after from whose text, trimmed, is
// anchor's (an @@ line's), then, failing that, the first after normalising
// typographic punctuation; -1 for none.
func seekAnchor(lines []string, from int, anchor string) int {
	for _, pass := range [...]matchPass{passSpace, passPunctuation} {
		want := pass.normalise(anchor)
		for i := from; i < len(lines); i++ {
			if pass.normalise(lines[i]) == want {
				return i
			}
		}
	}
	return -1
}
