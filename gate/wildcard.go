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
// A run of two or more '*' that starts the pattern or follows a '/', and is
// followed by a '/', also matches zero directories: the run and that '/'
// together match either nothing or any run of characters ending in '/'. So
// "**/.env*" matches ".env" as well as "a/b/.env.local", and "src/**/x.go"
// matches "src/x.go" and "src/a/x.go", as in globs and .gitignore; "*/.env"
// still needs a '/', and a run of '*' anywhere else means the same as one.
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
// star absorb more and retries from just after that star, which is enough
// because an earlier star can never need to absorb more than the later one
// already allows. A '*' absorbs one more character at a time; a "**/" (see
// [Match]) resumes only at the start of s or just after a '/' of s, the
// places where a run of whole directories can end. Its first resume is
// where it starts (zero directories), always such a place: the start of s,
// or just after the '/' the pattern matched before it. So whether the rest
// of the pattern can match after it never gets harder when it starts
// earlier, which is what the greedy argument needs.
//
// When match fails, retry reports whether a prefix of p could still match
// s. It is false when the failure came before any '*' with s left over: a
// prefix of p (such as the pattern without its optional tail) fails there
// too, so Match need not try it.
func match(p, s string) (ok, retry bool) {
	pi, si := 0, 0
	star, next := -1, 0 // pattern index after the last star; where its run ends in s
	dirs := false       // the last star is a "**/"
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				start := pi
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				dirs = pi-start >= 2 && pi < len(p) && slash(p[pi]) == '/' && (start == 0 || slash(p[start-1]) == '/')
				if dirs {
					pi++ // the "**/" takes its '/'
				} else if pi == len(p) {
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
		if dirs {
			i := nextSlash(s, next)
			if i < 0 {
				return false, true // no later directory for the "**/" to end at
			}
			next = i + 1
		} else {
			next += runeLen(s[next:])
		}
		pi, si = star, next
	}
	for pi < len(p) && p[pi] == '*' {
		pi, _ = starRun(p, pi)
	}
	return pi == len(p), true
}

// starRun reads the run of '*' at p[i]: end is the index after it, and after
// the '/' that follows when the run is a "**/" (dir): two or more '*' at the
// start of p or after a '/', followed by a '/'.
func starRun(p string, i int) (end int, dir bool) {
	end = i
	for end < len(p) && p[end] == '*' {
		end++
	}
	if end-i >= 2 && end < len(p) && slash(p[end]) == '/' && (i == 0 || slash(p[i-1]) == '/') {
		return end + 1, true
	}
	return end, false
}

// nextSlash is the index of the first '/' (or backslash) of s at or after i,
// or -1.
func nextSlash(s string, i int) int {
	for ; i < len(s); i++ {
		if slash(s[i]) == '/' {
			return i
		}
	}
	return -1
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
