package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressMin is the shortest stream a progress bar is drawn for: a
// shorter one is rebuilt before a person could read it.
const progressMin = 10_000

// progressBar draws "label  42% (420000/1000000)" on one line of a
// terminal, at most ten times a second. On anything but a terminal (a
// pipe, a file, a test's buffer) it draws nothing.
type progressBar struct {
	w     io.Writer // nil: quiet
	label string
	total uint64
	last  time.Time
	drawn bool
}

// newProgressBar is a bar for total steps on w, quiet unless w is a
// terminal and total is long enough to be worth watching.
func newProgressBar(w io.Writer, label string, total uint64) *progressBar {
	b := &progressBar{label: label, total: total}
	if total >= progressMin && isTerminal(w) {
		b.w = w
	}
	return b
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// at draws the bar at n of total.
func (b *progressBar) at(n uint64) {
	if b.w == nil {
		return
	}
	if now := time.Now(); n < b.total && now.Sub(b.last) < 100*time.Millisecond {
		return
	} else {
		b.last = now
	}
	fmt.Fprintf(b.w, "\r%s %3d%% (%d/%d)", b.label, n*100/b.total, n, b.total)
	b.drawn = true
}

// done clears the bar's line.
func (b *progressBar) done() {
	if b.w != nil && b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
