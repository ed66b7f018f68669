package builtin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzPunctFold: folding maps rune for rune, is idempotent, leaves ASCII
// alone, and its offsets map every folded byte back into the original.
func FuzzPunctFold(f *testing.F) {
	for _, s := range []string{"", "plain", "\u201cquoted\u201d", "it\u2019s \u2014 a\u00a0b", "\xff\u2013\x80", "\u2009x\u3000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		folded, at := foldPunctMap(s)
		if folded != NormalizePunct(s) {
			t.Fatalf("foldPunctMap %q and NormalizePunct %q differ", folded, NormalizePunct(s))
		}
		if NormalizePunct(folded) != folded {
			t.Fatalf("not idempotent: %q", folded)
		}
		if len(at) != len(folded)+1 || at[len(at)-1] != len(s) {
			t.Fatalf("%d offsets for %d bytes", len(at), len(folded))
		}
		for i := 1; i < len(at); i++ {
			if at[i] < at[i-1] {
				t.Fatalf("offsets go back at %d", i)
			}
		}
		if utf8.ValidString(s) && utf8.RuneCountInString(s) != utf8.RuneCountInString(folded) {
			t.Fatalf("%q folded to %q: rune counts differ", s, folded)
		}
		if !hasPunct(s) && folded != s {
			t.Fatalf("%q changed without punctuation", s)
		}
	})
}

// FuzzEditMatch: every pass returns ordered, non-overlapping splices inside
// the content, and each stands for what the pass says.
func FuzzEditMatch(f *testing.F) {
	for _, s := range [][3]string{
		{"a := 1   \nb := 2\n", "a := 1\nb := 2\n", "x\n"},
		{"func f() {\n\t\tif x {\n\t\t\treturn\n\t\t}\n}\n", "if x {\n\treturn\n}", "if y {\n\treturn 1\n}"},
		{"say(\"hi\")\nend\n", `say(\"hi\")\nend`, `say(\"bye\")`},
		{"msg := \u201cit\u2019s\u201d\r\n", `"it's"`, `"no"`},
		{"x \r\nx\t\r\n", "x\r\n", "y"},
		{"", "\n", "\n"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, content, old, repl string) {
		if old == "" {
			return
		}
		eol := lineEnding(content)
		m := matchIn{content: content, eol: eol, old: withEnding(old, eol), repl: withEnding(repl, eol), rawOld: old, rawRepl: repl}
		for _, p := range tolerantPasses {
			prev := 0
			for _, s := range p.find(m) {
				if s.start < prev || s.end < s.start || s.end > len(content) {
					t.Fatalf("%s: splice [%d,%d) after %d in %d bytes", p.name, s.start, s.end, prev, len(content))
				}
				prev = s.end
				got := content[s.start:s.end]
				switch p.name {
				case passTrailing:
					want, _ := oldLines(m.old)
					have, _ := oldLines(got)
					if len(want) != len(have) {
						t.Fatalf("trailing: %q matched %q", m.old, got)
					}
					for i := range want {
						if rtrim(want[i]) != rtrim(have[i]) {
							t.Fatalf("trailing: line %d %q matched %q", i, want[i], have[i])
						}
					}
				case passPunct:
					if NormalizePunct(got) != NormalizePunct(m.old) {
						t.Fatalf("punct: %q matched %q", m.old, got)
					}
				case passEscapes:
					u, _ := unescape(old)
					if got != withEnding(u, eol) {
						t.Fatalf("escapes: %q matched %q", old, got)
					}
				case passIndent:
					if strings.TrimSpace(got) == "" && strings.TrimSpace(m.old) != "" {
						t.Fatalf("indent: %q matched blank %q", m.old, got)
					}
				}
			}
		}
	})
}
