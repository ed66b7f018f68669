package gate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		why        string
		pattern, s string
		want       bool
	}{
		{"the whole string must match: exact", "read", "read", true},
		{"the whole string must match: not a prefix", "read", "reader", false},
		{"the whole string must match: not a suffix", "read", "xread", false},
		{"the whole string must match: not a substring", "ea", "read", false},
		{"* matches any run", "src/*.go", "src/main.go", true},
		{"* matches the empty run", "*.env", ".env", true},
		{"* matches across /", "src/*", "src/a/b/c.go", true},
		{"* matches newlines", "echo *", "echo a\nrm -rf ~", true},
		{"* matches only newlines", "a*b", "a\n\nb", true},
		{"* alone matches the empty string", "*", "", true},
		{"* alone matches anything", "*", "anything at all", true},
		{"* in the middle backtracks", "a*b*c", "aXbYbZc", true},
		{"* in the middle still needs the literals", "a*b*c", "aXbYbZ", false},
		{"* needs the suffix after the last star", "*.env", "x.env.local", false},
		{"? matches exactly one character", "?at", "cat", true},
		{"? does not match zero characters", "?at", "at", false},
		{"? does not match two characters", "?at", "flat", false},
		{"? matches a multibyte rune as one character", "caf?", "café", true},
		{"? matches a four-byte rune as one character", "?", "😀", true},
		{"? does not match half of a multibyte rune pair", "?", "éé", false},
		{"?? matches two multibyte runes", "??", "éé", true},
		{"? matches /", "a?b", "a/b", true},
		{"? matches a newline", "a?b", "a\nb", true},
		{"* then ? on multibyte runes", "*?", "日本", true},
		{"literal multibyte runes", "日本*", "日本語", true},
		{"literal multibyte runes differ", "日本", "日木", false},
		{"other characters are literal: dot", "a.b", "axb", false},
		{"other characters are literal: brackets", "[ab]", "a", false},
		{"other characters are literal: brackets match themselves", "[ab]", "[ab]", true},
		{"other characters are literal: regexp syntax", "a+(b)|^$", "a+(b)|^$", true},
		{"backslash in the string reads as /", "src/*", `src\main.go`, true},
		{"backslash in the pattern reads as /", `C:\Users\*`, "C:/Users/me", true},
		{"backslash in both reads as /", `a\b`, `a\b`, true},
		{"backslash is not an escape", `\*`, "/anything", true},
		{"backslash does not escape ?", `a\?`, "a/x", true},
		{"backslash is not a literal star", `\*`, "*", false},
		{"case-sensitive", "README*", "readme.md", false},
		{"case-sensitive multibyte", "É", "é", false},
		{"** means the same as *", "src/**", "src/a/b.go", true},
		{"** matches the empty run", "a**b", "ab", true},
		{"*** means the same as *", "a***", "a", true},
		{"**/ matches zero directories at the start", "**/.env*", ".env", true},
		{"**/ matches zero directories: a longer name", "**/.env*", ".env.local", true},
		{"**/ matches one directory", "**/.env*", "a/.env", true},
		{"**/ matches several directories", "**/.env*", "a/b/.env.local", true},
		{"**/ does not match part of a name", "**/.env", "x.env", false},
		{"**/ does not match part of a deeper name", "**/.env", "a/x.env", false},
		{"*/ still needs a /", "*/.env", ".env", false},
		{"/**/ in the middle matches zero directories", "src/**/x.go", "src/x.go", true},
		{"/**/ in the middle matches directories", "src/**/x.go", "src/a/b/x.go", true},
		{"/**/ in the middle keeps its slashes", "src/**/x.go", "srcx.go", false},
		{"/**/ does not match part of a name", "src/**/x.go", "src/ax.go", false},
		{"/**/ before a star", "src/**/*.go", "src/main.go", true},
		{"two **/ both zero", "**/**/x", "x", true},
		{"two **/ with directories", "a/**/b/**/c", "a/b/c", true},
		{"two **/ with directories between", "a/**/b/**/c", "a/x/b/y/z/c", true},
		{"**/ after a star elsewhere", "*a/**/b", "xa/b", true},
		{"**/ after a star needs the earlier star to absorb more", "*a/**/b", "a/aa/b", true},
		{"a final **/ matches nothing after a /", "a/**/", "a/", true},
		{"a final **/ matches directories", "a/**/", "a/b/", true},
		{"a final **/ still ends in /", "a/**/", "a/b", false},
		{"**/ alone matches the empty string", "**/", "", true},
		{"***/ is a **/", "***/x", "x", true},
		{"x**/ is not a **/", "x**/y", "xy", false},
		{"x**/ means x*/", "x**/y", "xa/y", true},
		{"**/ with backslashes", `**\.env`, ".env", true},
		{"**/ with backslashes in the string", "src/**/x.go", `src\a\x.go`, true},
		{"**/ with a multibyte name", "**/é?", "é日", true},
		{"**/ absolute", "/home/u/**/.ssh/*", "/home/u/.ssh/id_rsa", true},
		{"trailing ' *' matches with an argument", "git push *", "git push origin", true},
		{"trailing ' *' matches without the tail", "git push *", "git push", true},
		{"trailing ' *' matches a bare trailing space", "git push *", "git push ", true},
		{"trailing ' *' does not match a longer word", "git push *", "git pushx", false},
		{"trailing ' *' does not drop more than the tail", "git push *", "git", false},
		{"trailing ' **' is a trailing ' *'", "git push **", "git push", true},
		{"trailing ' *' with a star in the head", "go * *", "go test", true},
		{"a bare ' *' also matches the empty string", " *", "", true},
		{"a star without the space has no optional tail", "git push*", "git pushx", true},
		{"no space before the star: no special case", "ls*", "l", false},
		{"space-star in the middle is not a tail", "a * b", "a b", false},
		{"empty pattern matches only the empty string", "", "", true},
		{"empty pattern does not match text", "", "a", false},
		{"empty string does not match a literal", "a", "", false},
		{"empty string does not match ?", "?", "", false},
		{"invalid UTF-8 byte is one character for ?", "?", "\xff", true},
		{"invalid UTF-8 bytes are two characters", "?", "\xff\xfe", false},
		{"invalid UTF-8 byte matches itself", "a\xffb", "a\xffb", true},
		{"a lone lead byte is not part of a rune", "\xc3?", "é", false},
		{"a star never absorbs part of a rune", "*\xa9", "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got := Match(tt.pattern, tt.s)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Match(%q, %q) mismatch (-want +got):\n%s", tt.pattern, tt.s, diff)
			}
			if ref := refMatch(tt.pattern, tt.s); ref != tt.want {
				t.Errorf("refMatch(%q, %q) = %v: the reference disagrees with the table", tt.pattern, tt.s, ref)
			}
		})
	}
}

func TestMatchLongInputIsNotExponential(t *testing.T) {
	// A naive backtracking matcher takes exponential time here.
	pattern := strings.Repeat("*a", 30) + "b"
	s := strings.Repeat("a", 5000)
	if Match(pattern, s) {
		t.Fatalf("Match(%q, 5000×a) = true, want false", pattern)
	}
}

func TestMatchDirectoryStarsAreNotExponential(t *testing.T) {
	// A "**/" that backtracked over every way to split the directories
	// between several of them would take exponential time here.
	pattern := strings.Repeat("**/a/", 30) + "b"
	s := strings.Repeat("a/", 3000) + "c"
	if Match(pattern, s) {
		t.Fatalf("Match(%q, 3000×a/ c) = true, want false", pattern)
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	tests := []struct {
		why        string
		pattern, s string
	}{
		{"plain", "src/*.go", "src/gate/match.go"},
		{"backslashes", `C:\src\*`, `C:\src\main.go`},
		{"optional tail", "git push *", "git push"},
		{"multibyte", "caf? *", "café au lait"},
		{"zero directories", "**/.env*", ".env.local"},
		{"directory stars", "src/**/x/**/*.go", "src/a/b/x/c/d.go"},
	}
	for _, tt := range tests {
		got := testing.AllocsPerRun(100, func() { Match(tt.pattern, tt.s) })
		if diff := cmp.Diff(0.0, got); diff != "" {
			t.Errorf("%s: allocations per Match (-want +got):\n%s", tt.why, diff)
		}
	}
}

// wildcardText draws short strings over an alphabet rich in the characters
// Match treats specially.
func wildcardText() *rapid.Generator[string] {
	return rapid.StringOfN(rapid.RuneFrom([]rune("ab*?/ \\é\n")), 0, 10, -1)
}

func TestMatchAgreesWithReferences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pattern := wildcardText().Draw(t, "pattern")
		s := wildcardText().Draw(t, "s")
		got := Match(pattern, s)
		if want := refMatch(pattern, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference matcher says %v", pattern, s, got, want)
		}
		if want := regexpMatch(pattern, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, regexp reference says %v", pattern, s, got, want)
		}
	})
}

func TestMatchIsReflexive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := wildcardText().Draw(t, "s")
		if !Match(s, s) {
			t.Fatalf("Match(%q, %q) = false: every string must match itself as a pattern", s, s)
		}
	})
}

// FuzzMatch checks that Match never panics and agrees with the reference
// matchers. Inputs are cut to a length the quadratic reference handles fast.
// The seed corpus is in testdata/fuzz/FuzzMatch.
func FuzzMatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, pattern, s string) {
		const limit = 256
		pattern, s = pattern[:min(len(pattern), limit)], s[:min(len(s), limit)]
		got := Match(pattern, s)
		if want := refMatch(pattern, s); got != want {
			t.Fatalf("Match(%q, %q) = %v, reference matcher says %v", pattern, s, got, want)
		}
		if utf8.ValidString(pattern) && utf8.ValidString(s) {
			if want := regexpMatch(pattern, s); got != want {
				t.Fatalf("Match(%q, %q) = %v, regexp reference says %v", pattern, s, got, want)
			}
		}
	})
}
