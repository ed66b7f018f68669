package builtin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzHTMLToText feeds arbitrary markup to the converter: it must never
// panic, keep valid UTF-8 valid, and leave no run of blank lines or
// surrounding space.
func FuzzHTMLToText(f *testing.F) {
	f.Add("<h1>T</h1><p>a <a href='x'>b</a></p>", true)
	f.Add("<pre>  x\n\n\n  y</pre><script>s</script>", false)
	f.Add("<a><a><a></a>", true)
	f.Add("</head></script><li><strong>", true)
	f.Fuzz(func(t *testing.T, doc string, markdown bool) {
		out := htmlToText(strings.NewReader(doc), markdown)
		if utf8.ValidString(doc) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input: %q", out)
		}
		if strings.Contains(out, "\n\n\n") || out != strings.TrimSpace(out) {
			t.Fatalf("untidy output %q", out)
		}
	})
}
