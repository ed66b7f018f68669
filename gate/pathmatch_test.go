package gate

import (
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
		why           string
	}{
		{".stepgate/**", ".stepgate/config.yaml", true, "the project configuration"},
		{".stepgate/**", ".stepgate", true, "** takes no segment too: the directory itself"},
		{".stepgate/**", ".stepgate/", true, "a trailing slash is the same path"},
		{".stepgate/**", "./.stepgate/../.stepgate/x", true, ". and .. are resolved first"},
		{".stepgate/**", ".stepgate/skills/a/SKILL.md", true, "any depth below"},
		{".stepgate/**", ".stepgatex/config.yaml", false, "a segment matches whole"},
		{".stepgate/**", "src/.stepgate/config.yaml", true, "an unanchored pattern matches at any depth"},
		{".git/**", ".Git/Config", true, "case folds: a case-insensitive file system opens .git/config"},
		{".git/**", ".GIT/HOOKS/PRE-COMMIT", true, "case folds in every segment"},
		{".git/**", "vendor/x/.git/hooks/pre-commit", true, "a nested repository's hooks"},
		{".git/**", "/home/u/other/.git/config", true, "an absolute path outside the location"},
		{".git/**", ".gitignore", false, "not git's own directory"},
		{".git/**", "a/../../.git/config", true, "a leading .. is kept, the pattern still matches below it"},
		{"/Makefile", "Makefile", true, "anchored at the location root"},
		{"/Makefile", "sub/Makefile", false, "anchored: not below the root"},
		{"Makefile", "sub/Makefile", true, "unanchored: at any depth"},
		{"*.yaml", "deep/config.YAML", true, "a star within a segment, case folded"},
		{"*.yaml", "a.yaml/b", false, "a star never crosses a slash"},
		{"/a?c/**", "abc/d", true, "? is one character"},
		{"/a?c/**", "a/c/d", false, "? is never a slash"},
		{"**/**/a/**/b/**", "a/x/y/b", true, "runs of ** take what they need"},
		{"a\\**\\c", "a/b\\c", true, "a backslash is a slash"},
		{"/x/**/y", "x/y", true, "** between two segments may be empty"},
		{"/x/**/y", "x/p/q/y", true, "or take several"},
		{"/x/**/y", "x/p/q/z", false, "the tail must match"},
		{"", "", true, "an empty pattern and an empty path: nothing to protect in practice (CheckPathPattern refuses it)"},
		{"a", "", false, "an empty path matches only what takes no segment"},
		{"\xffa", "\xffA", true, "a byte that is not UTF-8 matches itself"},
		{"\xff", "\xfe", false, "and nothing else"},
	}
	for _, tt := range tests {
		if got := MatchPath(tt.pattern, tt.path); got != tt.want {
			t.Errorf("MatchPath(%q, %q) = %v, want %v: %s", tt.pattern, tt.path, got, tt.want, tt.why)
		}
	}
}

func TestMatchPathDoesNotAllocate(t *testing.T) {
	for _, p := range []string{".git/config", "vendor/x/.Git/hooks/pre-commit", "/home/u/a/b/c/d/e"} {
		if n := testing.AllocsPerRun(100, func() { MatchPath(".git/**", p) }); n != 0 {
			t.Errorf("MatchPath(.git/**, %q) allocates %v times", p, n)
		}
	}
}

func TestCheckPathPattern(t *testing.T) {
	for _, ok := range []string{".stepgate/**", ".git/config", "/Makefile", "**", "*.pem", "a\\b"} {
		if err := CheckPathPattern(ok); err != nil {
			t.Errorf("CheckPathPattern(%q) = %v, want nil", ok, err)
		}
	}
	for _, tt := range []struct{ pattern, want string }{
		{"", "names no path"},
		{"/", "names no path"},
		{"a//b", "empty segment"},
		{".stepgate/", "write dir/**"},
		{"./x", "no . or .. segment"},
		{"a/../b", "no . or .. segment"},
		{"a**", "** must be a whole segment"},
		{"a\nb", "no NUL or line break"},
	} {
		err := CheckPathPattern(tt.pattern)
		if !errors.Is(err, ErrPathPattern) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckPathPattern(%q) = %v, want ErrPathPattern saying %q", tt.pattern, err, tt.want)
		}
	}
}

// refMatchPath is MatchPath by the letter of its documentation: split,
// clean, and try every way ** can take segments.
func refMatchPath(pattern, p string) bool {
	split := func(s string, clean bool) []string {
		s = strings.ReplaceAll(s, "\\", "/")
		if clean && hasDotDot(s) { // a path's ".." is resolved; a pattern's is literal (CheckPathPattern refuses it)
			s = path.Clean(s)
		}
		var out []string
		for _, seg := range strings.Split(s, "/") {
			if seg != "" && seg != "." {
				out = append(out, seg)
			}
		}
		return out
	}
	ps := split(pattern, false)
	if !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(pattern, "\\") {
		ps = append([]string{"**"}, ps...)
	}
	var rec func(ps, ss []string) bool
	rec = func(ps, ss []string) bool {
		switch {
		case len(ps) == 0:
			return len(ss) == 0
		case ps[0] == "**":
			return rec(ps[1:], ss) || len(ss) > 0 && rec(ps, ss[1:])
		case len(ss) == 0:
			return false
		}
		return refSegment([]rune(ps[0]), []rune(ss[0])) && rec(ps[1:], ss[1:])
	}
	return rec(ps, split(p, true))
}

func refSegment(p, s []rune) bool {
	switch {
	case len(p) == 0:
		return len(s) == 0
	case p[0] == '*':
		return refSegment(p[1:], s) || len(s) > 0 && refSegment(p, s[1:])
	case len(s) == 0:
		return false
	case p[0] == '?' || strings.EqualFold(string(p[0]), string(s[0])):
		return refSegment(p[1:], s[1:])
	}
	return false
}

func genPathOf(segs ...string) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.IntRange(0, 5).Draw(t, "n")
		var b strings.Builder
		if rapid.Bool().Draw(t, "lead") {
			b.WriteString(rapid.SampledFrom([]string{"/", "./", "\\"}).Draw(t, "leading"))
		}
		for i := range n {
			if i > 0 {
				b.WriteString(rapid.SampledFrom([]string{"/", "/", "//", "\\", "/./"}).Draw(t, "sep"))
			}
			b.WriteString(rapid.SampledFrom(segs).Draw(t, "seg"))
		}
		if rapid.Bool().Draw(t, "trail") {
			b.WriteString("/")
		}
		return b.String()
	})
}

var (
	genPathPattern = genPathOf("a", "A", "b", ".git", "*", "?", "**", "a*", "*b", "?.GIT")
	genPath        = genPathOf("a", "A", "b", "B", "ab", ".git", ".Git", "..", "x.git")
)

// MatchPath agrees with the reference, ignores case and separators' shape,
// and an unanchored pattern matches at any depth.
func TestMatchPathProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pat, p := genPathPattern.Draw(t, "pattern"), genPath.Draw(t, "path")
		got := MatchPath(pat, p)
		if want := refMatchPath(pat, p); got != want {
			t.Fatalf("MatchPath(%q, %q) = %v, the reference says %v", pat, p, got, want)
		}
		if up := MatchPath(pat, strings.ToUpper(p)); up != got {
			t.Fatalf("MatchPath(%q, %q) = %v but %v in upper case", pat, p, got, up)
		}
		if dressed := MatchPath(pat, "./"+p+"/"); dressed != got && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "\\") {
			t.Fatalf("MatchPath(%q, %q) = %v but %v with ./ and a trailing slash", pat, p, got, dressed)
		}
		anchored := strings.HasPrefix(pat, "/") || strings.HasPrefix(pat, "\\")
		if got && !anchored && !hasDotDot(p) && !MatchPath(pat, "deeper/"+p) {
			t.Fatalf("unanchored %q matches %q but not deeper/%s", pat, p, p)
		}
		if got && anchored && !MatchPath(pat[1:], p) {
			t.Fatalf("anchored %q matches %q, unanchored does not", pat, p)
		}
	})
}

func FuzzMatchPath(f *testing.F) {
	f.Add(".git/**", ".Git/Config")
	f.Add(".stepgate/**", "./.stepgate/../.stepgate/x")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		got := MatchPath(pattern, p) // never panics
		if len(pattern) > 24 || len(p) > 48 || !utf8.ValidString(pattern) || !utf8.ValidString(p) ||
			strings.ContainsRune(pattern+p, utf8.RuneError) {
			return // the reference is exponential and reads runes
		}
		if want := refMatchPath(pattern, p); got != want {
			t.Fatalf("MatchPath(%q, %q) = %v, the reference says %v", pattern, p, got, want)
		}
		if CheckPathPattern(pattern) == nil && got && !MatchPath(pattern, p+"/") {
			t.Fatalf("MatchPath(%q, %q) but not with a trailing slash", pattern, p)
		}
	})
}
