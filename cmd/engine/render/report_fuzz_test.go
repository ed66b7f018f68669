package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/cmd/engine/render/rendertest"
)

// Whatever string a run holds in every field, the page renders and its
// markup is the template's: one script (the page's own), one style sheet,
// one template per step, no image, frame or details element (those exist
// only once the page's script makes them).
func FuzzReportEscapes(f *testing.F) {
	for _, s := range []string{"", "plain", `<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `</template><script>x</script>`, `</style><style>*{}`, "\x00\xff", `{{.}}`, `javascript:alert(1)`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		if err := render.Report(&b, rendertest.Hostile(s)); err != nil {
			t.Fatalf("render: %v", err)
		}
		page := strings.ToLower(b.String())
		for tag, want := range map[string]int{"<script": 1, "</script": 1, "<style": 1, "</style": 1, "<template": 1, "</template": 1, "<img": 0, "<iframe": 0, "<details": 0} {
			if n := strings.Count(page, tag); n != want {
				t.Fatalf("the page has %d %s, want %d, for %q", n, tag, want, s)
			}
		}
	})
}
