package render_test

import (
	"bytes"
	"testing"

	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/cmd/engine/render/rendertest"
)

// bigSteps is the length of the run the benchmarks render: the report's
// browser test loads the same run.
const bigSteps = 10_000

// BenchmarkReport10000Steps renders the HTML report of a 10,000-step run
// (two calls a step): the time `engine report` and the web app's run page
// spend once the run is fetched. It reports the page's size (page-B)
// beside the time and the memory allocated.
func BenchmarkReport10000Steps(b *testing.B) {
	d := rendertest.Big(bigSteps)
	var page bytes.Buffer
	if err := render.Report(&page, d); err != nil { // the template is parsed once, before the clock
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		page.Reset()
		if err := render.Report(&page, d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(page.Len()), "page-B")
}

// BenchmarkTimeline10000Steps prints the text timeline of the same run, as
// `engine show` does on a terminal (coloured). It reports the timeline's
// size (text-B) beside the time and the memory allocated.
func BenchmarkTimeline10000Steps(b *testing.B) {
	d := rendertest.Big(bigSteps)
	var text bytes.Buffer
	render.Timeline(&text, d, render.Palette{On: true})
	b.ReportAllocs()
	for b.Loop() {
		text.Reset()
		render.Timeline(&text, d, render.Palette{On: true})
	}
	b.ReportMetric(float64(text.Len()), "text-B")
}
