package gate

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// refMatch is the reference matcher for Match: the spec read literally, by
// dynamic programming over characters. It is quadratic in time and space, so
// callers keep its inputs short.
func refMatch(pattern, s string) bool {
	pattern = strings.ReplaceAll(pattern, `\`, "/")
	s = strings.ReplaceAll(s, `\`, "/")
	for strings.Contains(pattern, "**") {
		pattern = strings.ReplaceAll(pattern, "**", "*")
	}
	if refWhole(chars(pattern), chars(s)) {
		return true
	}
	if head, ok := strings.CutSuffix(pattern, " *"); ok {
		return refWhole(chars(head), chars(s))
	}
	return false
}

// chars splits s into characters: runes, and bytes that are not valid UTF-8.
func chars(s string) []string {
	var cs []string
	for s != "" {
		_, w := utf8.DecodeRuneInString(s)
		cs = append(cs, s[:w])
		s = s[w:]
	}
	return cs
}

// refWhole reports whether the characters p match all of s, where "*"
// matches any run and "?" any one character.
func refWhole(p, s []string) bool {
	// m[i][j]: p[i:] matches s[j:].
	m := make([][]bool, len(p)+1)
	for i := range m {
		m[i] = make([]bool, len(s)+1)
	}
	m[len(p)][len(s)] = true
	for i := len(p) - 1; i >= 0; i-- {
		for j := len(s); j >= 0; j-- {
			switch {
			case p[i] == "*":
				m[i][j] = m[i+1][j] || (j < len(s) && m[i][j+1])
			case j == len(s):
				m[i][j] = false
			case p[i] == "?":
				m[i][j] = m[i+1][j+1]
			default:
				m[i][j] = p[i] == s[j] && m[i+1][j+1]
			}
		}
	}
	return m[0][0]
}

// regexpMatch is a second reference for valid UTF-8, built the way the
// reference system built its matcher: quote the pattern into a regexp, with
// `.*` for '*', `.` for '?' and an optional ` .*` tail. Runs of '*' are
// collapsed first, since the spec reads "**" as "*".
func regexpMatch(pattern, s string) bool {
	pattern = strings.ReplaceAll(pattern, `\`, "/")
	s = strings.ReplaceAll(s, `\`, "/")
	var b strings.Builder
	prevStar := false
	for _, r := range pattern {
		star := r == '*'
		switch {
		case star && prevStar: // a run of '*' is one '*'
		case star:
			b.WriteString(".*")
		case r == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
		prevStar = star
	}
	expr := b.String()
	if head, ok := strings.CutSuffix(expr, " .*"); ok {
		expr = head + "( .*)?"
	}
	return regexp.MustCompile(`(?s)^` + expr + `$`).MatchString(s)
}
