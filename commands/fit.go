package commands

import (
	"cmp"
	"os"
	"slices"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
)

// shortening are the bounds fit shortens results to, in turn, until a
// commit fits one message: first the largest results to a short preview
// (a spill of their own), then every result to ever shorter previews, at
// last to the marker line naming its file alone. Each result keeps its
// whole output in a file.
var shortening = []executor.Limits{
	{MaxLines: 100, MaxBytes: 4096},
	{MaxLines: 40, MaxBytes: 1024},
	{MaxLines: 12, MaxBytes: 384},
	{MaxLines: 1, MaxBytes: 1},
}

// envelopeRoom is what a commit's message needs besides its encoded body
// (headers), kept free of the log's limit.
const envelopeRoom = 4 << 10

// fitter shortens one commit's results and keeps its size up to date.
type fitter struct {
	e     *base
	c     *events.Commit
	total int // the commit's encoded size, or a little above
	owned bool
}

// shorten shortens the largest results to lim, one by one, until the
// commit is within budget or every result is within lim.
func (f *fitter) shorten(lim executor.Limits, budget int) {
	for _, r := range f.largest(func(events.ToolResultRecorded) bool { return true }) {
		if f.total <= budget {
			return
		}
		old := f.c.Events[r.i].(events.ToolResultRecorded)
		nr, sp, changed := f.e.shortenResult(old, lim)
		if !changed {
			continue
		}
		if sp != nil {
			f.replace(r.i, nr, r.n, sp)
		} else {
			f.replace(r.i, nr, r.n)
		}
	}
}

// spillMedia moves the media parts of the largest results with any to
// files, until the commit is within budget.
func (f *fitter) spillMedia(budget int) {
	hasMedia := func(r events.ToolResultRecorded) bool {
		return slices.ContainsFunc(r.Parts, func(p events.Part) bool { return p.Type != executor.PartText })
	}
	for _, r := range f.largest(hasMedia) {
		if f.total <= budget {
			return
		}
		old := f.c.Events[r.i].(events.ToolResultRecorded)
		res, sps := f.e.store.SpillMedia(fromEventResult(old))
		nr := toEventResult(old.CallID, res)
		nr.Files = slices.Clip(old.Files)
		for _, sp := range sps {
			nr.Files = append(nr.Files, sp.Path)
		}
		f.replace(r.i, nr, r.n, sps...)
	}
}

// replace puts nr in place of the result at i (of size n) and appends the
// files it spilled to.
func (f *fitter) replace(i int, nr events.ToolResultRecorded, n int, sps ...*executor.Spilled) {
	if !f.owned {
		f.c.Events, f.owned = slices.Clone(f.c.Events), true
	}
	f.c.Events[i] = nr
	f.total += eventSize(nr) - n
	for _, sp := range sps {
		ev := spilledEvent(sp)
		f.c.Events = append(f.c.Events, ev)
		f.total += eventSize(ev) + 1
	}
}

// encodedSize is the exact size of c encoded.
func encodedSize(c *events.Commit) (int, error) {
	b, err := events.Append(nil, c)
	return len(b), err
}

// eventSize is ev's size in an encoded commit: its payload, its type and
// version around it and a separator (a few bytes over, never under).
func eventSize(ev events.Event) int {
	b, err := events.AppendPayload(nil, ev)
	if err != nil {
		return 0
	}
	return len(b) + len(ev.EventType()) + 32
}

func fromEventResult(r events.ToolResultRecorded) executor.Result {
	parts := make([]executor.Part, len(r.Parts))
	for i, p := range r.Parts {
		parts[i] = executor.Part{Type: p.Type, Text: p.Text, MIME: p.MIME, Data: p.Data}
	}
	return executor.Result{Parts: parts, Structured: r.Structured, IsError: r.IsError}
}

// sizedResult is a result's index among the commit's events and its
// encoded size.
type sizedResult struct{ i, n int }

// largest returns the commit's results that keep holds, largest first (in
// commit order among equals).
func (f *fitter) largest(keep func(events.ToolResultRecorded) bool) []sizedResult {
	var rs []sizedResult
	for i, ev := range f.c.Events {
		if r, ok := ev.(events.ToolResultRecorded); ok && keep(r) {
			rs = append(rs, sizedResult{i, eventSize(r)})
		}
	}
	slices.SortStableFunc(rs, func(a, b sizedResult) int { return cmp.Compare(b.n, a.n) })
	return rs
}

// commitBudget is the largest encoded commit fit lets through.
func (b *base) commitBudget() int { return b.log.MaxMsgSize() - envelopeRoom }

// fit keeps a commit within one message: while the encoded commit would
// exceed the log's limit, its results are shortened at the output store
// (spilled whole to files of their own, recorded with OutputFileStored,
// and replaced by previews naming them) — the largest first, then all of
// them to ever shorter previews (see shortening), at last their media
// parts to files too. A settle commit therefore always fits: what no bound
// can shorten is the model's arguments, and a step whose arguments cannot
// fit is refused before any effect (see checkBudget). It reports whether
// it changed c; the events it replaces are cloned first (they may be the
// caller's, kept for a retry). fit decides how far results are shortened,
// the output store alone cuts them: this is the one place a commit's
// results are re-bounded, as Bound at execution is the one place output
// is first cut.
func (b *base) fit(c *events.Commit) bool {
	budget := b.commitBudget()
	if boundOf(c.Events) <= budget {
		return false // the common case: no encoding needed to know
	}
	total, err := encodedSize(c)
	if err != nil || total <= budget {
		return false // one that does not encode fails at commit the same way
	}
	f := fitter{e: b, c: c, total: total}
	for _, lim := range shortening {
		if f.total <= budget {
			break
		}
		f.shorten(lim, budget)
	}
	if f.total > budget {
		f.spillMedia(budget) // what text cannot free: media parts to files
	}
	return f.owned
}

// shortenResult bounds r to lim at the output store: a result whose whole
// output is in a file already gets a shorter preview naming it; any other
// is spilled to a file of its own (sp). A result the bound would not make
// smaller (a short text, which the marker and the file's record outweigh)
// is left as it is.
func (b *base) shortenResult(r events.ToolResultRecorded, lim executor.Limits) (nr events.ToolResultRecorded, sp *executor.Spilled, changed bool) {
	before := eventSize(r)
	if len(r.Files) == 0 && before <= b.floor {
		return r, nil, false // no smaller than a file reference
	}
	res := fromEventResult(r)
	var bounded executor.Result
	if len(r.Files) > 0 {
		bounded = b.store.Rebound(res, r.Files[0], lim)
	} else {
		bounded, sp = b.store.Bound(res, lim)
	}
	nr = toEventResult(r.CallID, bounded)
	nr.Files = r.Files
	if sp != nil {
		nr.Files = append(slices.Clip(r.Files), sp.Path)
	}
	after := eventSize(nr)
	if sp != nil {
		after += eventSize(spilledEvent(sp))
	}
	if after >= before {
		if sp != nil {
			_ = os.Remove(sp.Path) // recorded nowhere: not worth keeping
		}
		return r, nil, false
	}
	return nr, sp, true
}
