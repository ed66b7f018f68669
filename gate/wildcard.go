package gate

import "unicode/utf8"

// Match reports whether s matches the wildcard pattern, the way a rule's
// action and resource patterns match a request.
//
// The whole of s must match. In the pattern, '*' matches any run of
// characters, including '/' and newlines, and a run of several '*' means the
// same as one; '?' matches exactly one character (one UTF-8 encoded rune, or
// one byte that is not valid UTF-8); every other character matches only
// itself, case-sensitively. There are no classes and no escapes: a backslash
// in either string is read as '/'. A pattern that ends in a space and '*'
// also matches without that tail, so "git push *" matches "git push" and
// "git push origin" but not "git pushx".
//
// Match does not allocate and takes at most O(len(pattern)·len(s)) steps.
func Match(pattern, s string) bool {
	ok, retry := match(pattern, s)
	if ok || !retry {
		return ok
	}
	if head, ok := optionalTail(pattern); ok {
		ok, _ = match(head, s)
		return ok
	}
	return false
}

// optionalTail returns pattern without its final space and run of '*', and
// whether pattern ends that way.
func optionalTail(pattern string) (string, bool) {
	i := len(pattern)
	for i > 0 && pattern[i-1] == '*' {
		i--
	}
	if i == len(pattern) || i == 0 || pattern[i-1] != ' ' {
		return "", false
	}
	return pattern[:i-1], true
}

// match matches the whole of s against p without the optional-tail rule.
// It is the iterative greedy matcher: on a mismatch it lets the most recent
// '*' absorb one more character and retries from just after that star, which
// is enough because an earlier star can never need to absorb more than the
// later one already allows.
//
// When match fails, retry reports whether a prefix of p could still match
// s. It is false when the failure came before any '*' with s left over: a
// prefix of p (such as the pattern without its optional tail) fails there
// too, so Match need not try it.
func match(p, s string) (ok, retry bool) {
	pi, si := 0, 0
	star, next := -1, 0 // pattern index after the last '*'; where its run ends in s
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				if pi == len(p) {
					return true, false // a final '*' takes the rest of s
				}
				star, next = pi, si
				continue
			case c == '?':
				pi++
				si += runeLen(s[si:])
				continue
			case c < utf8.RuneSelf:
				if slash(c) == slash(s[si]) {
					pi++
					si++
					continue
				}
			default:
				w := runeLen(p[pi:])
				if runeLen(s[si:]) == w && p[pi:pi+w] == s[si:si+w] {
					pi += w
					si += w
					continue
				}
			}
		}
		if star < 0 {
			return false, false
		}
		next += runeLen(s[next:])
		pi, si = star, next
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p), true
}

// runeLen returns the length in bytes of the character at the start of the
// non-empty s: one rune, or one byte that is not valid UTF-8.
func runeLen(s string) int {
	if s[0] < utf8.RuneSelf {
		return 1
	}
	_, w := utf8.DecodeRuneInString(s)
	return w
}

// slash reads a backslash as '/'.
func slash(c byte) byte {
	if c == '\\' {
		return '/'
	}
	return c
}
