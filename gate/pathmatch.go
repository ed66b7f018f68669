package gate

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MatchPath reports whether the path p matches the protected-path pattern,
// the way a protection (a rule with [SourceProtected]) matches the resource
// of an edit request.
//
// Both are read as segments separated by '/' (a backslash counts as '/');
// empty and "." segments are ignored, and a path holding ".." segments is
// cleaned first, so "./.stepgate/../.stepgate/x/" is ".stepgate/x". A
// pattern segment "**" matches any number of path segments, none included;
// in any other segment '*' matches any run of characters and '?' one
// character, neither of them '/'. Characters match case-insensitively (Unicode
// simple folding): on a case-insensitive file system ".Git/Config" is
// ".git/config", and on a case-sensitive one asking once too often is the
// safe side.
//
// A pattern that starts with '/' is anchored: it must match the whole path
// (relative to the location root, or an absolute path outside it). Any other
// pattern matches at any depth, as if it began with "**/": ".git/**" matches
// ".git/config", "vendor/x/.git/hooks/pre-commit" and
// "/home/u/other/.git/config".
//
// MatchPath does not allocate unless p holds a ".." segment.
func MatchPath(pattern, p string) bool {
	anchored := pattern != "" && (pattern[0] == '/' || pattern[0] == '\\')
	if hasDotDot(p) {
		p = path.Clean(strings.ReplaceAll(p, "\\", "/"))
	}
	pi, si := 0, 0
	starP, starS := -1, 0 // pattern offset after the last "**"; where it resumes in p
	if !anchored {
		starP = 0 // the implied leading "**"
	}
	for {
		ps, pn := segment(pattern, pi)
		if ps == "**" {
			pi = pn
			starP, starS = pi, si
			continue
		}
		ss, sn := segment(p, si)
		if ss == "" {
			return ps == "" // what is left of the pattern is "**" at most
		}
		if ps != "" && matchSegment(ps, ss) {
			pi, si = pn, sn
			continue
		}
		if starP < 0 {
			return false
		}
		// Let the last "**" take one more segment of p and try again.
		if ss, starS = segment(p, starS); ss == "" {
			return false
		}
		pi, si = starP, starS
	}
}

// segment returns the next segment of s at or after offset i, skipping
// separators and "." segments, and the offset just after it; "" at the end.
func segment(s string, i int) (string, int) {
	for {
		for i < len(s) && (s[i] == '/' || s[i] == '\\') {
			i++
		}
		j := i
		for j < len(s) && s[j] != '/' && s[j] != '\\' {
			j++
		}
		if seg := s[i:j]; seg != "." {
			return seg, j
		}
		i = j
	}
}

// hasDotDot reports whether s has a ".." segment.
func hasDotDot(s string) bool {
	for i := 0; ; {
		seg, j := segment(s, i)
		switch seg {
		case "":
			return false
		case "..":
			return true
		}
		i = j
	}
}

// matchSegment matches one segment against one pattern segment: '*' is any
// run of characters, '?' one character, anything else itself up to case.
// It is the greedy matcher of [Match], rune by rune.
func matchSegment(p, s string) bool {
	pi, si := 0, 0
	star, next := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				star, next = pi, si
				continue
			case '?':
				pi++
				si += runeLen(s[si:])
				continue
			default:
				pw, sw := runeLen(p[pi:]), runeLen(s[si:])
				if sameFolded(p[pi:pi+pw], s[si:si+sw]) {
					pi += pw
					si += sw
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		next += runeLen(s[next:])
		pi, si = star, next
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// sameFolded reports whether two one-character strings are the same
// character up to case. A byte that is not valid UTF-8 is only itself.
func sameFolded(a, b string) bool {
	if a == b {
		return true
	}
	ra, wa := utf8.DecodeRuneInString(a)
	rb, wb := utf8.DecodeRuneInString(b)
	if ra == utf8.RuneError && wa < 2 || rb == utf8.RuneError && wb < 2 {
		return false
	}
	return unicode.ToLower(ra) == unicode.ToLower(rb) || unicode.ToUpper(ra) == unicode.ToUpper(rb)
}

// CheckPathPattern reports what is wrong with a protected-path pattern, or
// nil. A pattern names a path as it resolves, so it has no empty, "." or
// ".." segment and does not end in '/' (write "dir/**" for a directory and
// what it holds); "**" stands alone in its segment; it holds no NUL or line
// break. The error wraps [ErrPathPattern].
func CheckPathPattern(pattern string) error {
	if strings.ContainsAny(pattern, "\x00\n\r") {
		return fmt.Errorf("%w %q: no NUL or line break", ErrPathPattern, pattern)
	}
	rest := pattern
	if rest != "" && (rest[0] == '/' || rest[0] == '\\') {
		rest = rest[1:]
	}
	if rest == "" {
		return fmt.Errorf("%w %q: it names no path", ErrPathPattern, pattern)
	}
	for _, seg := range strings.Split(strings.ReplaceAll(rest, "\\", "/"), "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w %q: an empty segment (write dir/** for a directory and what it holds)", ErrPathPattern, pattern)
		case seg == "." || seg == "..":
			return fmt.Errorf("%w %q: paths are matched resolved, with no . or .. segment", ErrPathPattern, pattern)
		case seg != "**" && strings.Contains(seg, "**"):
			return fmt.Errorf("%w %q: ** must be a whole segment", ErrPathPattern, pattern)
		}
	}
	return nil
}
