package executor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"
)

// Output bounds: what fits the model's context unchanged.
const (
	DefaultMaxLines = 2000
	DefaultMaxBytes = 51200
	// OutputRetention is how long a spilled output file is kept.
	OutputRetention = 7 * 24 * time.Hour
)

// Limits bound one result's text. Zero fields take the defaults.
type Limits struct {
	MaxLines int `json:"max_lines" yaml:"max_lines"`
	MaxBytes int `json:"max_bytes" yaml:"max_bytes"`
}

func (l Limits) withDefaults() Limits {
	if l.MaxLines <= 0 {
		l.MaxLines = DefaultMaxLines
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	return l
}

// Spilled describes a full output written to a file.
type Spilled struct {
	Path    string    `json:"path"`
	Bytes   int64     `json:"bytes"`
	SHA256  string    `json:"sha256"`
	Expires time.Time `json:"expires"`
}

// OutputStore is the one boundary where tool output is cut: tools return
// their whole output and only the store shortens it — Bound to a call's
// limits as it finishes, then Fit to the budget of the commit that records
// it, before the commit is built; what Fit leaves is final. An output over
// the limits is written whole to a file of its own in the store's
// directory, created exclusively, and the model gets a preview naming that
// file. Safe for concurrent use.
type OutputStore struct {
	dir   string
	clock func() time.Time
	newID func() string
}

// NewOutputStore returns a store spilling into dir (created if missing),
// naming files tool_<id> with ids from newID.
func NewOutputStore(dir string, clock func() time.Time, newID func() string) *OutputStore {
	return &OutputStore{dir: dir, clock: clock, newID: newID}
}

// Dir returns the directory spilled outputs go to.
func (s *OutputStore) Dir() string { return s.dir }

// Bound returns r as the model may see it under lim. What is measured is the
// text parts joined with newlines or, without text parts, the structured
// value as indented JSON; media parts pass unchanged. An output within the
// limits is returned as it is. A larger one is spilled and replaced by its
// preview (see Preview); if the file cannot be written the call fails with
// "Failed to write tool output: …" — a lossy preview is never a success.
func (s *OutputStore) Bound(r Result, lim Limits) (Result, *Spilled) {
	lim = lim.withDefaults()
	text := measured(r)
	if fits(text, lim) {
		return r, nil
	}
	sp, err := s.spill(text)
	if err != nil {
		return ErrorResult(WriteFailed(err)), nil
	}
	out := Result{IsError: r.IsError, Parts: []Part{{Type: PartText, Text: Preview(text, sp.Path, lim)}}}
	for _, p := range r.Parts {
		if p.Type != PartText {
			out.Parts = append(out.Parts, p)
		}
	}
	// The structured value stays behind too (the commit must stay small);
	// the file holds the whole measured text.
	return out, sp
}

// measured returns the text Bound measures: the text parts joined, or
// without text parts the structured value as indented JSON.
func measured(r Result) string {
	for _, p := range r.Parts {
		if p.Type == PartText {
			return r.Text()
		}
	}
	if len(r.Structured) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, r.Structured, "", "  "); err != nil {
		return string(r.Structured)
	}
	return b.String()
}

func fits(text string, lim Limits) bool {
	return strings.Count(text, "\n")+1 <= lim.MaxLines && len(text) <= lim.MaxBytes
}

func (s *OutputStore) spill(text string) (*Spilled, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	path := s.PathOf(s.newID())
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, errors.Join(werr, os.Remove(path))
	}
	sum := sha256.Sum256([]byte(text))
	return &Spilled{Path: path, Bytes: int64(len(text)), SHA256: hex.EncodeToString(sum[:]),
		Expires: s.clock().Add(OutputRetention).UTC()}, nil
}

// WriteFailed is the result of a call whose full output could not be kept.
func WriteFailed(err error) string { return "Failed to write tool output: " + err.Error() }

// Marker is the line between a preview's head and tail.
func Marker(path string) string {
	return "... output truncated; full content saved to " + path + " ..."
}

// Preview is what the model sees of text, spilled to path, under lim: with
// L = max_lines − 4, the first ceil(L/2) and the last floor(L/2) lines; if
// those still exceed the byte budget (max_bytes − marker − 4), the longest
// UTF-8-safe prefix of the head within half the budget and suffix of the
// tail within the other half. Head, marker line and tail are separated by
// blank lines; an empty head or tail is left out (tiny limits give the
// marker alone).
func Preview(text, path string, lim Limits) string {
	lines := strings.Split(text, "\n")
	return preview(lines, lines, true, path, lim)
}

// preview is Preview of a text whose head lines and tail lines are given
// apart; same says they are one text's lines (a line is never in both).
func preview(headLines, tailLines []string, same bool, path string, lim Limits) string {
	lim = lim.withDefaults()
	l := max(lim.MaxLines-4, 0)
	h, t := (l+1)/2, l/2
	h = min(h, len(headLines))
	if same {
		t = min(t, len(tailLines)-h)
	} else {
		t = min(t, len(tailLines))
	}
	head := strings.Join(headLines[:h], "\n")
	tail := strings.Join(tailLines[len(tailLines)-t:], "\n")
	marker := Marker(path)
	if budget := lim.MaxBytes - len(marker) - 4; len(head)+len(tail) > budget {
		budget = max(budget, 0)
		head = prefixWithin(head, (budget+1)/2)
		tail = suffixWithin(tail, budget/2)
	}
	parts := make([]string, 0, 3)
	for _, p := range []string{head, marker, tail} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Rebound shortens r, a result Bound already spilled whole to path, to
// lim: its text becomes a preview under lim naming the same file — no new
// file, since that one holds the whole output. The head and tail of a
// preview Bound made are kept apart, so the shorter preview is still the
// start and the end of the whole output. A result within lim is returned
// as it is; media parts pass unchanged, the structured value stays behind.
func (s *OutputStore) Rebound(r Result, path string, lim Limits) Result {
	lim = lim.withDefaults()
	text := measured(r)
	if fits(text, lim) {
		return r
	}
	var short string
	if head, tail, ok := strings.Cut(text, Marker(path)); ok {
		head, tail = strings.TrimSuffix(head, "\n\n"), strings.TrimPrefix(tail, "\n\n")
		short = preview(splitLines(head), splitLines(tail), false, path, lim)
	} else {
		short = Preview(text, path, lim)
	}
	out := Result{IsError: r.IsError, Parts: []Part{{Type: PartText, Text: short}}}
	for _, p := range r.Parts {
		if p.Type != PartText {
			out.Parts = append(out.Parts, p)
		}
	}
	return out
}

// SpillMedia writes each media part of r to a file of its own and puts in
// its place a text part naming the file (see MediaMarker), for a result
// that must shrink further than its text can. Text parts are unchanged. A
// part whose file cannot be written is replaced by "Failed to write tool
// output: …" and the result becomes an error.
func (s *OutputStore) SpillMedia(r Result) (Result, []*Spilled) {
	out := Result{IsError: r.IsError, Structured: r.Structured, Parts: make([]Part, 0, len(r.Parts))}
	var sps []*Spilled
	for _, p := range r.Parts {
		if p.Type == PartText {
			out.Parts = append(out.Parts, p)
			continue
		}
		sp, err := s.spill(string(p.Data))
		if err != nil {
			out.IsError = true
			out.Parts = append(out.Parts, Part{Type: PartText, Text: WriteFailed(err)})
			continue
		}
		sps = append(sps, sp)
		out.Parts = append(out.Parts, Part{Type: PartText, Text: MediaMarker(p.MIME, len(p.Data), sp.Path)})
	}
	return out, sps
}

// MediaMarker is the text that stands for a media part spilled to path.
func MediaMarker(mime string, n int, path string) string {
	return fmt.Sprintf("[media %s, %d bytes, saved to %s]", mime, n, path)
}

// splitLines is the lines of s; none for "".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// prefixWithin is the longest prefix of s of at most n bytes that does not
// cut a UTF-8 sequence.
func prefixWithin(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// suffixWithin is the longest suffix of s of at most n bytes that starts at
// the beginning of a UTF-8 sequence.
func suffixWithin(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
