package executor

import (
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// absPath draws an absolute path of a few short segments, written with
// stray separators and dots that cleaning removes.
func absPath(t *rapid.T, label string) string {
	segs := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "bc", "a.b", ".", "x"}), 0, 4).Draw(t, label)
	return "/" + strings.Join(segs, rapid.SampledFrom([]string{"/", "//", "/./"}).Draw(t, label+"sep"))
}

// TestUnderIsPrefixBySegments: a path is under an entry exactly when the
// entry's cleaned segments are a prefix of the path's: /a/b is under /a
// and /a/b, never under /a/bc, whatever the spelling.
func TestUnderIsPrefixBySegments(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, e := absPath(t, "path"), absPath(t, "entry")
		ps := strings.Split(strings.Trim(filepath.Clean(p), "/"), "/")
		es := strings.Split(strings.Trim(filepath.Clean(e), "/"), "/")
		if filepath.Clean(e) == "/" {
			es = nil
		}
		if filepath.Clean(p) == "/" {
			ps = nil
		}
		want := len(es) <= len(ps)
		for i := 0; want && i < len(es); i++ {
			want = es[i] == ps[i]
		}
		if got := under(p, e); got != want {
			t.Fatalf("under(%q, %q) = %v, want %v", p, e, got, want)
		}
		// deniedBy agrees with under for paths that do not exist (no
		// symlink to follow).
		if got := deniedBy([]string{e}, "/loc", p) != ""; got != want {
			t.Fatalf("deniedBy([%q], %q) = %v, want %v", e, p, got, want)
		}
	})
}

// FuzzUnder: for any two absolute paths, under agrees with within (the
// location's own containment, by filepath.Rel), and never panics on any
// input.
func FuzzUnder(f *testing.F) {
	for _, s := range [][2]string{{"/a/b", "/a"}, {"/a/bc", "/a/b"}, {"/a/b/", "/a/b"}, {"/", "/"}, {"/a", "/"},
		{"/a/../b", "/b"}, {"/a//b/./c", "/a/b"}, {"a/b", "/a"}, {"", "/"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, p, e string) {
		got := under(p, e)
		if !filepath.IsAbs(p) || !filepath.IsAbs(e) {
			return
		}
		if want := within(filepath.Clean(e), filepath.Clean(p)); got != want {
			t.Fatalf("under(%q, %q) = %v, within says %v", p, e, got, want)
		}
	})
}
