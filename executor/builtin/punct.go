package builtin

import (
	"strings"
	"unicode/utf8"
)

// Typographic punctuation, as word processors and models write it, folded to
// the ASCII a source file usually holds: the tolerant pass of edit (and of
// apply_patch) compares text after folding both sides. Every rune folds to
// exactly one rune, so a match in the folded text maps back to the original
// rune for rune.

// foldPunct returns the ASCII rune r stands for, or r itself: single quotes
// and primes (‘ ’ ‚ ‛ ′ ‵) to ', double quotes and double primes (“ ” „ ‟ ″
// ‶ « ») to ", hyphens, dashes and the minus sign (‐ ‑ ‒ – — ― − ⁃) to -,
// and the non-breaking and fixed-width spaces (U+00A0, U+2000–U+200A,
// U+202F, U+205F, U+3000) to a space.
func foldPunct(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\u2035':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u2036', '\u00AB', '\u00BB':
		return '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\u2043':
		return '-'
	case '\u00A0', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	if r >= '\u2000' && r <= '\u200A' {
		return ' '
	}
	return r
}

// hasPunct reports whether s holds a rune foldPunct changes.
func hasPunct(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && foldPunct(r) != r {
			return true
		}
	}
	return false
}

// NormalizePunct returns s with its typographic punctuation folded to ASCII
// (see foldPunct); the rest of s, invalid UTF-8 included, is unchanged.
func NormalizePunct(s string) string {
	if !hasPunct(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError {
			b.WriteString(s[:size])
		} else {
			b.WriteRune(foldPunct(r))
		}
		s = s[size:]
	}
	return b.String()
}

// foldPunctMap is NormalizePunct(s) with, for each byte offset of the folded
// text and one past its end, the offset in s of the rune it came from: a
// match [i, j) of the folded text at rune boundaries is [at[i], at[j]) of s.
func foldPunctMap(s string) (folded string, at []int) {
	var b strings.Builder
	b.Grow(len(s))
	at = make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		n := b.Len()
		if r == utf8.RuneError {
			b.WriteString(s[i : i+size])
		} else {
			b.WriteRune(foldPunct(r))
		}
		for range b.Len() - n {
			at = append(at, i)
		}
		i += size
	}
	return b.String(), append(at, len(s))
}
