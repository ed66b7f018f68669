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
	if refWhole(tokens(pattern), chars(s)) {
		return true
	}
	if head, ok := strings.CutSuffix(strings.TrimRight(pattern, "*"), " "); ok && strings.HasSuffix(pattern, "*") {
		return refWhole(tokens(head), chars(s))
	}
	return false
}

// dirStar is the token of a "**/" that may match zero directories.
const dirStar = "**/"

// tokens splits a pattern into characters, a run of '*' read as one "*",
// and a run of two or more '*' at the start or after '/', followed by '/',
// read as one dirStar token (with that '/').
func tokens(p string) []string {
	var ts []string
	for i := 0; i < len(p); {
		if p[i] != '*' {
			_, w := utf8.DecodeRuneInString(p[i:])
			ts = append(ts, p[i:i+w])
			i += w
			continue
		}
		j := i
		for j < len(p) && p[j] == '*' {
			j++
		}
		if j-i >= 2 && j < len(p) && p[j] == '/' && (i == 0 || p[i-1] == '/') {
			ts = append(ts, dirStar)
			i = j + 1
			continue
		}
		ts = append(ts, "*")
		i = j
	}
	return ts
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
			case p[i] == dirStar: // nothing, or any run ending in '/'
				m[i][j] = m[i+1][j]
				for k := j; k < len(s) && !m[i][j]; k++ {
					m[i][j] = s[k] == "/" && m[i+1][k+1]
				}
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
// `.*` for '*', `.` for '?', `(?:.*/)?` for a "**/" that may match zero
// directories, and an optional ` .*` tail. Other runs of '*' are one '*'.
func regexpMatch(pattern, s string) bool {
	pattern = strings.ReplaceAll(pattern, `\`, "/")
	s = strings.ReplaceAll(s, `\`, "/")
	var b strings.Builder
	for _, tok := range tokens(pattern) {
		switch tok {
		case dirStar:
			b.WriteString("(?:.*/)?")
		case "*":
			b.WriteString(".*")
		case "?":
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(tok))
		}
	}
	expr := b.String()
	if head, ok := strings.CutSuffix(expr, " .*"); ok {
		expr = head + "( .*)?"
	}
	return regexp.MustCompile(`(?s)^` + expr + `$`).MatchString(s)
}
