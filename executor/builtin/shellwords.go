package builtin

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// literal returns the value bash gives word when that value is fixed by the
// text alone, and whether it is: plain, single-quoted and double-quoted text
// without expansions. Anything bash would expand — parameters, command and
// arithmetic substitutions, globs, brace expansion, a leading tilde,
// extended globs — and the ANSI-C $'…' and locale $"…" quotes make a word not
// literal: the analysis then cannot know what the word becomes and asks.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, ok := unquotedLit(p.Value, i == 0)
			if !ok {
				return "", false
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(doubleQuotedLit(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unquotedLit removes the backslash quoting of unquoted text; it refuses
// text bash would expand: glob characters, a brace expansion, a tilde that
// starts the word.
func unquotedLit(s string, first bool) (string, bool) {
	if first && strings.HasPrefix(s, "~") {
		return "", false
	}
	var b strings.Builder
	var plain strings.Builder // the unescaped characters, for the glob and brace checks
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				plain.WriteByte('_')
			}
			continue
		}
		b.WriteByte(c)
		plain.WriteByte(c)
	}
	if p := plain.String(); p != "[" && p != "]" && (strings.ContainsAny(p, "*?") || hasBracketPair(p) || hasBraceExpansion(p)) {
		return "", false
	}
	return b.String(), true
}

// hasBracketPair reports a '[' with a ']' after it: a glob bracket expression.
func hasBracketPair(s string) bool {
	i := strings.IndexByte(s, '[')
	return i >= 0 && strings.IndexByte(s[i+1:], ']') >= 0
}

// hasBraceExpansion reports a '{' followed by ',' or ".." : what bash may
// brace-expand ("{}" alone, as find uses it, stays as it is).
func hasBraceExpansion(s string) bool {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return false
	}
	rest := s[i+1:]
	return strings.Contains(rest, ",") || strings.Contains(rest, "..")
}

// doubleQuotedLit removes the backslashes bash removes inside double quotes:
// before $, `, ", \ and a newline (which goes with it).
func doubleQuotedLit(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(s[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// literals returns the literal values of words, and false when one is not
// literal.
func literals(words []*syntax.Word) ([]string, bool) {
	out := make([]string, len(words))
	for i, w := range words {
		v, ok := literal(w)
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
