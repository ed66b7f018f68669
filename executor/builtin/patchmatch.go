package builtin

import (
	"strings"
	"unicode"
)

// matchPass is how strictly a hunk's lines were compared with the file's.
type hunkPass int

// The passes, strictest first: a hunk is searched with each in turn, and the
// first pass that finds it wins.
const (
	hunkExact hunkPass = iota
	hunkTrailingSpace
	hunkSpace
	hunkPunctuation
	hunkPassCount
)

// String is how a result names the pass.
func (m hunkPass) String() string {
	switch m {
	case hunkTrailingSpace:
		return "ignoring trailing whitespace"
	case hunkSpace:
		return "ignoring leading and trailing whitespace"
	case hunkPunctuation:
		return "after normalising typographic punctuation"
	}
	return "exactly"
}

// normalise is a line as pass m compares it.
func (m hunkPass) normalise(s string) string {
	switch m {
	case hunkTrailingSpace:
		return strings.TrimRightFunc(s, unicode.IsSpace)
	case hunkSpace:
		return strings.TrimSpace(s)
	case hunkPunctuation:
		return strings.TrimSpace(strings.Map(foldPunct, s))
	}
	return s
}

// seekLines finds want in lines at or after from: each pass in turn over
// the whole range, the first position found in the strictest pass. With eof,
// want must be the last lines. It returns -1 when no pass finds it.
func seekLines(lines []string, from int, want []string, eof bool) (int, hunkPass) {
	lo, hi := from, len(lines)-len(want)
	if eof {
		lo = hi
	}
	if lo < from || hi < lo {
		return -1, hunkExact
	}
	var norm []string // the file's lines as the pass compares them, from lo
	wantNorm := make([]string, len(want))
	for pass := hunkExact; pass < hunkPassCount; pass++ {
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
	return -1, hunkExact
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
	for _, pass := range [...]hunkPass{hunkSpace, hunkPunctuation} {
		want := pass.normalise(anchor)
		for i := from; i < len(lines); i++ {
			if pass.normalise(lines[i]) == want {
				return i
			}
		}
	}
	return -1
}
