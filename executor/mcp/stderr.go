package mcp

import (
	"bytes"
	"log/slog"
	"sync"
)

// Bounds on what a stdio server's stderr may put in the log.
const (
	maxStderrLine  = 1024 // bytes of one line kept
	maxStderrLines = 200  // lines logged per connection; the rest are counted
)

// stderrLog writes a stdio server's stderr to the log at debug level, a
// line at a time (a trailing "\r" dropped), each line cut at maxStderrLine
// bytes (and the redacted line again, a marker being longer than what it
// replaces), at most maxStderrLines lines per connection, redacted by the
// server's Redactor as one stream:
//
//   - Line breaks are invisible to the match: a secret, or an encoding of
//     one, printed over several lines is redacted in each of them. So is
//     one that runs past the cut, which is decided on the whole line
//     before it is cut.
//   - At each edge of a logged line — its end (or the cut) and its start —
//     a fragment of at least minFragment bytes that begins (at the end) or
//     ends (at the start) a secret or an encoding is redacted, even when
//     the rest of it was never printed.
//
// A line is logged as soon as it ends, never held back, so at most
// minFragment-1 bytes of a secret's beginning can reach the log, at the end
// of the line before the one that completes it; no logged line holds a
// secret or an encoding of one.
type stderrLog struct {
	log    *slog.Logger
	server string
	red    *Redactor

	mu    sync.Mutex
	front []byte // the line's first maxStderrLine+window bytes
	back  []byte // the line's last window bytes beyond front (when longer)
	long  bool   // bytes between front and back were dropped
	look  []byte // the stream's last window bytes before this line, line breaks removed
	lines int
}

func newStderrLog(log *slog.Logger, server string, red *Redactor) *stderrLog {
	return &stderrLog{log: log, server: server, red: red}
}

// window is how much context a match needs around a line.
func (w *stderrLog) window() int {
	if w.red == nil {
		return 0
	}
	return w.red.window
}

// Write logs the complete lines in p; it never fails, so the server is
// never blocked on its stderr.
func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// add appends part of the current line, keeping its front and its back.
func (w *stderrLog) add(p []byte) {
	if w.lines > maxStderrLines {
		return
	}
	win := w.window()
	room := maxStderrLine + win - len(w.front)
	take := min(len(p), max(room, 0))
	w.front = append(w.front, p[:take]...)
	p = p[take:]
	if len(p) == 0 {
		return
	}
	w.back = append(w.back, p...)
	if drop := len(w.back) - win; drop > 0 {
		w.long = true
		w.back = append(w.back[:0], w.back[drop:]...)
	}
}

// endLine logs the current line, redacted, and starts the next.
func (w *stderrLog) endLine() {
	defer func() { w.front, w.back, w.long = w.front[:0], w.back[:0], false }()
	w.lines++
	switch {
	case w.lines == maxStderrLines+1:
		w.log.Debug("mcp: server stderr: further lines are not logged", "server", w.server)
		return
	case w.lines > maxStderrLines:
		return
	}
	line := slicesConcat(w.front, w.back)
	if w.long {
		line = slicesConcat(w.front, []byte{'\n'}, w.back) // a seam no needle crosses
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	logged := min(len(line), maxStderrLine)
	if w.long {
		logged = min(len(w.front), maxStderrLine)
	}
	text := slicesConcat(w.look, line)
	out := w.red.redactLine(string(text), len(w.look), len(w.look)+logged)
	w.log.Debug("mcp: server stderr", "server", w.server, "line", out[:min(len(out), maxStderrLine)])
	w.look = lastBytes(w.window(), w.look, bytes.ReplaceAll(line, []byte{'\n'}, nil))
}

// redactLine redacts text[lo:hi], a logged line, in the context of the
// whole text (the stream before it and the line beyond the cut): stream
// matches overlapping it, and fragments at its edges.
func (r *Redactor) redactLine(text string, lo, hi int) string {
	if r == nil || len(r.stream) == 0 {
		return text[lo:hi]
	}
	spans := matches(text, r.stream)
	if k := longestPrefixAtEnd(text[:hi], r.stream); k >= minFragment {
		spans = append(spans, span{hi - k, hi})
	}
	if k := longestSuffixAtStart(text[lo:], r.stream); k >= minFragment {
		spans = append(spans, span{lo, lo + k})
	}
	var clipped []span
	for _, sp := range merge(spans) {
		if sp.hi > lo && sp.lo < hi {
			clipped = append(clipped, span{max(sp.lo, lo) - lo, min(sp.hi, hi) - lo})
		}
	}
	out := replaceSpans(text[lo:hi], clipped, r.marker)
	if r.marker == "" {
		out = r.Redact(out) // removal may join pieces into a match
	}
	return out
}

// longestPrefixAtEnd is the length of the longest suffix of text that is
// a prefix of a needle (a whole needle included).
func longestPrefixAtEnd(text string, needles []needle) int {
	best := 0
	for _, n := range needles {
		best = max(best, overlap(text, n.s))
	}
	return best
}

// longestSuffixAtStart is the length of the longest prefix of text that is
// a suffix of a needle.
func longestSuffixAtStart(text string, needles []needle) int {
	best := 0
	for _, n := range needles {
		head := text[:min(len(text), len(n.s))]
		best = max(best, overlap(reverse(head), reverse(n.s)))
	}
	return best
}

// overlap is the length of the longest suffix of a that is a prefix of b,
// by the Knuth–Morris–Pratt failure function over b and a's last len(b)
// bytes: linear in len(b).
func overlap(a, b string) int {
	if len(b) == 0 {
		return 0
	}
	a = a[max(0, len(a)-len(b)):]
	fail := make([]int, len(b))
	for i, k := 1, 0; i < len(b); i++ {
		for k > 0 && b[i] != b[k] {
			k = fail[k-1]
		}
		if b[i] == b[k] {
			k++
		}
		fail[i] = k
	}
	k := 0
	for i := range len(a) {
		for k > 0 && (k == len(b) || a[i] != b[k]) {
			k = fail[k-1]
		}
		if a[i] == b[k] {
			k++
		}
	}
	return k
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// lastBytes returns the last n bytes of the concatenation of parts, in a
// new slice.
func lastBytes(n int, parts ...[]byte) []byte {
	all := slicesConcat(parts...)
	return append([]byte(nil), all[max(0, len(all)-n):]...)
}

func slicesConcat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
