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
	// shape is the word with every quoted or escaped character replaced by
	// '_': what bash's glob, brace and tilde expansion look at.
	var value, shape strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.HasSuffix(p.Value, "\\") && (len(p.Value)-len(strings.TrimRight(p.Value, "\\")))%2 == 1 {
				return "", false // a backslash before the end of the text: bash keeps or drops it
			}
			unquoted(p.Value, &value, &shape)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			value.WriteString(p.Value)
			shape.WriteString(strings.Repeat("_", len(p.Value)))
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				v := doubleQuotedLit(lit.Value)
				value.WriteString(v)
				shape.WriteString(strings.Repeat("_", len(v)))
			}
		default:
			return "", false
		}
	}
	if expands(shape.String()) {
		return "", false
	}
	return value.String(), true
}

// unquoted appends unquoted text to value with its backslash quoting
// removed, and to shape with each escaped character as '_'.
func unquoted(s string, value, shape *strings.Builder) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			if s[i] != '\n' {
				value.WriteByte(s[i])
				shape.WriteByte('_')
			}
			continue
		}
		value.WriteByte(c)
		shape.WriteByte(c)
	}
}

// expands reports a word shape bash would expand: a glob, a brace
// expansion, a tilde at the start or (in a word like an assignment) after
// '=' or ':', an unquoted "$" before more text.
func expands(shape string) bool {
	if shape == "[" || shape == "]" {
		return false
	}
	if i := strings.IndexByte(shape, '$'); i >= 0 && i < len(shape)-1 {
		return true // "$" before more text the parser took as plain (after a line continuation, say): bash may expand it
	}
	if strings.ContainsAny(shape, "*?") || hasBracketPair(shape) || hasBraceExpansion(shape) || strings.HasPrefix(shape, "~") {
		return true
	}
	return strings.Contains(shape, "=") && (strings.Contains(shape, "=~") || strings.Contains(shape, ":~"))
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
