package mcp

import (
	"slices"
	"strings"
)

// Bounds of what counts as a secret and as a piece of one.
const (
	// minSecret is the shortest secret redacted: shorter ones ("1", "on")
	// would blank out ordinary text and are not secrets worth the name.
	minSecret = 4
	// minFragment is the shortest piece of a secret (or of an encoding of
	// one) redacted at an edge of a logged stderr line, where the rest of
	// it was cut off or never printed.
	minFragment = 4
	// minBase64Inner is the shortest inner part (in characters) of a
	// secret's base64 inside longer encoded text that is matched: 8
	// characters are 6 bytes of the secret, so any secret of 8 bytes or
	// more is found at every alignment, and no short run of ordinary
	// base64 is mistaken for one.
	minBase64Inner = 8
)

// A Redactor removes one server's resolved secrets, and their common
// encodings, from what the server returns or prints. It is built once per
// connection from the secrets resolved for it ([NewRedactor]) and is the
// one place that decides what is a secret in a text: tool results (text,
// media, structured content), tool names, descriptions and schemas from
// tools/list, error messages and stderr (see [stderrLog]) all go through
// it before anything is logged or committed.
//
// Each secret of at least 4 bytes is matched as itself and as its
// lower- and upper-case hex, its standard and URL-safe base64 (alone, with
// or without padding, and inside longer base64 text at each of the three
// alignments: the part of the encoding that depends on the secret alone,
// with the up to three characters either side that carry some of its bits),
// its percent-encodings (Go's query and path escaping, encodeURIComponent,
// RFC 3986 and every byte escaped, with upper- or lower-case hex) and its
// JSON string escapings (with and without HTML, ASCII-only and slash
// escaping). Every match is replaced by the marker, "[redacted]" unless a
// secret holds one of its bytes (then another bracket pair is chosen, so
// that a marker never completes a secret with the text around it). After
// Redact, no secret and no encoding of one occurs in the text; text that
// holds none is returned unchanged. A Redactor is immutable and safe for
// concurrent use; the zero value and nil redact nothing.
type Redactor struct {
	needles []needle // longest first
	stream  []needle // needles with line breaks removed, for stderr
	marker  string
	short   int // secrets too short to redact
	window  int // longest stream needle
}

// needle is one form of one secret to match.
type needle struct {
	s      string
	base64 bool // a run of base64: the characters beside a match carry secret bits too
}

// NewRedactor builds the redactor of the given secrets. Secrets shorter
// than 4 bytes are not redacted (see [Redactor.Short]); duplicates and
// empty strings are ignored.
func NewRedactor(secrets []string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		if len(s) < minSecret {
			r.short++
			continue
		}
		r.needles = append(r.needles, encodings(s)...)
	}
	r.needles = dedupe(r.needles)
	for _, n := range r.needles {
		if s := strings.NewReplacer("\r", "", "\n", "").Replace(n.s); len(s) >= minSecret {
			r.stream = append(r.stream, needle{s: s, base64: n.base64})
			r.window = max(r.window, len(s))
		}
	}
	r.stream = dedupe(r.stream)
	r.marker = chooseMarker(slices.Concat(r.needles, r.stream))
	return r
}

// Short is how many of the secrets are too short (under 4 bytes) to be
// redacted; the client warns about them.
func (r *Redactor) Short() int {
	if r == nil {
		return 0
	}
	return r.short
}

// Redact returns text with every match of a secret or an encoding of one
// replaced by the marker.
func (r *Redactor) Redact(text string) string {
	if r == nil || len(r.needles) == 0 {
		return text
	}
	for {
		spans := matches(text, r.needles)
		if len(spans) == 0 {
			return text
		}
		text = replaceSpans(text, spans, r.marker)
		if r.marker != "" {
			return text // a chosen marker cannot complete a match: one pass is enough
		}
	}
}

// RedactBytes is Redact for bytes (media data); b is returned as is when
// it holds no secret.
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil || len(r.needles) == 0 {
		return b
	}
	s := r.Redact(string(b))
	if len(s) == len(b) && s == string(b) {
		return b
	}
	return []byte(s)
}

// span is a half-open byte range [lo, hi) of a text.
type span struct{ lo, hi int }

// matches returns every occurrence of every needle in text (overlapping
// ones too), base64 ones widened by the characters around them that carry
// secret bits, merged and sorted.
func matches(text string, needles []needle) []span {
	var out []span
	for _, n := range needles {
		for from := 0; from+len(n.s) <= len(text); {
			i := strings.Index(text[from:], n.s)
			if i < 0 {
				break
			}
			sp := span{from + i, from + i + len(n.s)}
			if n.base64 {
				sp = widenBase64(text, sp)
			}
			out = append(out, sp)
			from += i + 1
		}
	}
	return merge(out)
}

// widenBase64 takes in the up to three base64 characters either side of a
// match (the partial groups that mix the secret's bits with its
// neighbours'), and the padding after it.
func widenBase64(text string, sp span) span {
	for k := 0; k < 3 && sp.lo > 0 && isBase64(text[sp.lo-1]); k++ {
		sp.lo--
	}
	for k := 0; k < 3 && sp.hi < len(text) && isBase64(text[sp.hi]); k++ {
		sp.hi++
	}
	for k := 0; k < 2 && sp.hi < len(text) && text[sp.hi] == '='; k++ {
		sp.hi++
	}
	return sp
}

// isBase64 reports whether c is in the standard or the URL-safe alphabet.
func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// merge sorts spans and joins the overlapping and touching ones.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.lo <= last.hi {
			last.hi = max(last.hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// replaceSpans replaces each of the sorted, disjoint spans with marker.
func replaceSpans(text string, spans []span, marker string) string {
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(text[last:sp.lo])
		b.WriteString(marker)
		last = sp.hi
	}
	b.WriteString(text[last:])
	return b.String()
}

// markers are the candidates, in order of preference. A marker fits when
// no needle holds its first or last byte and none is part of its word:
// then a needle in redacted text lies wholly in text that was not
// redacted, where it would have been matched, so one pass leaves none.
var markers = []string{"[redacted]", "<redacted>", "{redacted}", "(redacted)", "|redacted|", "#redacted#", "~redacted~", "[REDACTED]", "<REDACTED>", "{hidden}", "(hidden)"}

// chooseMarker returns the first marker that fits the needles, or "" (a
// match is then removed, and Redact repeats until nothing matches).
func chooseMarker(needles []needle) string {
	for _, m := range markers {
		word := m[1 : len(m)-1]
		if !slices.ContainsFunc(needles, func(n needle) bool {
			return strings.IndexByte(n.s, m[0]) >= 0 || strings.IndexByte(n.s, m[len(m)-1]) >= 0 || strings.Contains(word, n.s)
		}) {
			return m
		}
	}
	return ""
}

// dedupe sorts needles longest first and drops repeats (a base64 flag
// wins).
func dedupe(ns []needle) []needle {
	slices.SortFunc(ns, func(a, b needle) int {
		if len(a.s) != len(b.s) {
			return len(b.s) - len(a.s)
		}
		if c := strings.Compare(a.s, b.s); c != 0 {
			return c
		}
		if a.base64 == b.base64 {
			return 0
		}
		if a.base64 {
			return -1
		}
		return 1
	})
	return slices.CompactFunc(ns, func(a, b needle) bool { return a.s == b.s })
}
