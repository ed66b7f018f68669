package main

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// The progress bar is quiet on anything but a terminal (a pipe, a buffer),
// and on a terminal draws its percentage on one line and clears it.
func TestProgressBarIsQuietWhenPiped(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var buf bytes.Buffer
	for _, out := range []io.Writer{w, &buf} {
		b := newProgressBar(out, "verify: rebuilding", 1_000_000)
		if b.w != nil {
			t.Errorf("a bar on %T draws", out)
		}
		b.at(1_000_000)
		b.done()
	}
	if buf.Len() != 0 {
		t.Errorf("a bar on a buffer wrote %q", buf.String())
	}
	drawn := &progressBar{w: &buf, label: "verify: rebuilding", total: 200}
	drawn.at(50)
	drawn.at(51) // within a tenth of a second: not drawn
	drawn.at(200)
	drawn.done()
	if got, want := buf.String(), "\rverify: rebuilding  25% (50/200)\rverify: rebuilding 100% (200/200)\r\033[K"; got != want {
		t.Errorf("the bar drew %q, want %q", got, want)
	}
	if short := newProgressBar(os.Stderr, "x", progressMin-1); short.w != nil {
		t.Errorf("a bar for a short stream draws")
	}
}
