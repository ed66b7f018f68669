package executor

import (
	"cmp"
	"os"
	"slices"
)

// Bounded is one result a commit records, as the store bounded it: the
// result the model sees and the files that hold its whole output (the
// first, when there is one, its text; any further ones its media).
type Bounded struct {
	Result Result
	Files  []string
}

// Budget is the room one commit gives the results it records, measured by
// the committer, who knows how the commit is encoded (see
// [OutputStore.Fit]).
type Budget struct {
	// Limit is the most bytes the commit may take.
	Limit int
	// Used is what the commit takes with its results as given, exactly.
	Used int
	// Floor is the most room a result takes once shortened as far as it
	// goes (the marker line naming its file, and the file's record): a
	// result without a file that takes no more is left as it is.
	Floor int
	// Size is what result i takes in the commit, as r (a few bytes over,
	// never under).
	Size func(i int, r Bounded) int
	// Record is what the record of a spilled file takes in the commit.
	Record func(sp *Spilled) int
}

// shortening are the bounds Fit shortens results to, in turn, until the
// commit fits: first the largest results to a short preview (a spill of
// their own), then every result to ever shorter previews, at last to the
// marker line naming its file alone. Each result keeps its whole output in
// a file.
var shortening = []Limits{
	{MaxLines: 100, MaxBytes: 4096},
	{MaxLines: 40, MaxBytes: 1024},
	{MaxLines: 12, MaxBytes: 384},
	{MaxLines: 1, MaxBytes: 1},
}

// Fit shortens, in place, the results rs of one commit, each already
// bounded to its call's limits (see [OutputStore.Bound]), while the commit
// would exceed b: the largest first, then all of them to ever shorter
// previews, at last their media parts to files too. A result whose whole
// output is in a file already gets a shorter preview naming it (see
// [OutputStore.Rebound]); any other is spilled to a file of its own. A
// result the bound would not make smaller (a short text, which the marker
// and the file's record outweigh) is left as it is. What Fit leaves is
// final: the results the model sees and the commit records. It returns the
// files it spilled, in order, for the commit to record, and whether it
// changed any result.
func (s *OutputStore) Fit(rs []Bounded, b Budget) (spilled []*Spilled, changed bool) {
	f := fitter{s: s, rs: rs, b: b, total: b.Used}
	for _, lim := range shortening {
		if f.total <= b.Limit {
			break
		}
		f.shorten(lim)
	}
	if f.total > b.Limit {
		f.spillMedia() // what text cannot free: media parts to files
	}
	return f.spilled, f.changed
}

// fitter shortens one commit's results and keeps the commit's size up to
// date.
type fitter struct {
	s       *OutputStore
	rs      []Bounded
	b       Budget
	total   int // the commit's size, or a little above
	spilled []*Spilled
	changed bool
}

// shorten shortens the largest results to lim, one by one, until the
// commit is within budget or every result is within lim.
func (f *fitter) shorten(lim Limits) {
	for _, r := range f.largest(func(Bounded) bool { return true }) {
		if f.total <= f.b.Limit {
			return
		}
		nr, sp, changed := f.shortenOne(r.i, lim)
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

// shortenOne bounds result i to lim (see Fit).
func (f *fitter) shortenOne(i int, lim Limits) (nr Bounded, sp *Spilled, changed bool) {
	r := f.rs[i]
	before := f.b.Size(i, r)
	if len(r.Files) == 0 && before <= f.b.Floor {
		return r, nil, false // no smaller than a file reference
	}
	nr.Files = r.Files
	if len(r.Files) > 0 {
		nr.Result = f.s.Rebound(r.Result, r.Files[0], lim)
	} else {
		nr.Result, sp = f.s.Bound(r.Result, lim)
	}
	if sp != nil {
		nr.Files = append(slices.Clip(r.Files), sp.Path)
	}
	after := f.b.Size(i, nr)
	if sp != nil {
		after += f.b.Record(sp)
	}
	if after >= before {
		if sp != nil {
			_ = os.Remove(sp.Path) // recorded nowhere: not worth keeping
		}
		return r, nil, false
	}
	return nr, sp, true
}

// spillMedia moves the media parts of the largest results with any to
// files, until the commit is within budget.
func (f *fitter) spillMedia() {
	hasMedia := func(r Bounded) bool {
		return slices.ContainsFunc(r.Result.Parts, func(p Part) bool { return p.Type != PartText })
	}
	for _, r := range f.largest(hasMedia) {
		if f.total <= f.b.Limit {
			return
		}
		old := f.rs[r.i]
		res, sps := f.s.SpillMedia(old.Result)
		nr := Bounded{Result: res, Files: slices.Clip(old.Files)}
		for _, sp := range sps {
			nr.Files = append(nr.Files, sp.Path)
		}
		f.replace(r.i, nr, r.n, sps...)
	}
}

// replace puts nr in place of result i (of size n) and keeps the files it
// spilled to.
func (f *fitter) replace(i int, nr Bounded, n int, sps ...*Spilled) {
	f.rs[i], f.changed = nr, true
	f.total += f.b.Size(i, nr) - n
	for _, sp := range sps {
		f.spilled = append(f.spilled, sp)
		f.total += f.b.Record(sp) + 1
	}
}

// sizedResult is a result's index and its size in the commit.
type sizedResult struct{ i, n int }

// largest returns the results that keep holds, largest first (in commit
// order among equals).
func (f *fitter) largest(keep func(Bounded) bool) []sizedResult {
	var rs []sizedResult
	for i, r := range f.rs {
		if keep(r) {
			rs = append(rs, sizedResult{i, f.b.Size(i, r)})
		}
	}
	slices.SortStableFunc(rs, func(a, b sizedResult) int { return cmp.Compare(b.n, a.n) })
	return rs
}
