package executor_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/stepgate/stepgate/executor"
)

// fitSize is the test's measure of a result in a commit: its text, its
// media as base64, the files it names and a little around each.
func fitSize(_ int, r executor.Bounded) int {
	n := 40 + len(r.Result.Structured)
	for _, p := range r.Result.Parts {
		n += 24 + len(p.Text) + len(p.MIME) + (len(p.Data)+2)/3*4
	}
	for _, f := range r.Files {
		n += 3 + len(f)
	}
	return n
}

func fitRecord(sp *executor.Spilled) int { return 120 + len(sp.Path) }

// commitSize is what the test's commit of rs and the files spilled to
// takes.
func commitSize(rs []executor.Bounded, spilled []*executor.Spilled) int {
	n := 200
	for i, r := range rs {
		n += fitSize(i, r)
	}
	for _, sp := range spilled {
		n += fitRecord(sp) + 1
	}
	return n
}

// Fit leaves a commit's results within the budget whenever shortening can
// (or every result as short as it goes), never makes one larger, keeps
// every output whole in a file the result names, and leaves no file that
// no result names; a commit within budget is left as it is.
func TestFitKeepsTheCommitWithinBudget(t *testing.T) {
	root := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp(root, "case") // a fresh directory per case
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		s := executor.NewOutputStore(dir, time.Now, func() string { n++; return fmt.Sprintf("%08d", n) })
		line := rapid.StringMatching(`[a-z0-9 é]{0,40}`)
		count := rapid.IntRange(1, 20).Draw(t, "results")
		rs := make([]executor.Bounded, count)
		wholes := make([]string, count) // each result's whole text
		medias := make([][]byte, count)
		for i := range rs {
			wholes[i] = strings.Join(rapid.SliceOfN(line, rapid.IntRange(1, 200).Draw(t, "at least"), 200).Draw(t, "lines"), "\n")
			r := executor.TextResult(wholes[i])
			if rapid.Bool().Draw(t, "media") {
				medias[i] = rapid.SliceOfN(rapid.Byte(), 1, 3000).Draw(t, "data")
				r.Parts = append(r.Parts, executor.Part{Type: executor.PartMedia, MIME: "image/png", Data: medias[i]})
			}
			lim := executor.Limits{MaxLines: rapid.IntRange(5, 300).Draw(t, "max lines"), MaxBytes: rapid.IntRange(200, 20000).Draw(t, "max bytes")}
			bounded, sp := s.Bound(r, lim) // as at execution
			rs[i].Result = bounded
			if sp != nil {
				rs[i].Files = []string{sp.Path}
			}
		}
		before := slices.Clone(rs)
		used := commitSize(rs, nil)
		floor := fitSize(0, executor.Bounded{Result: executor.ErrorResult(executor.Marker(s.PathOf("00000000"))), Files: []string{s.PathOf("00000000")}}) +
			fitRecord(&executor.Spilled{Path: s.PathOf("00000000")}) + 2
		limit := rapid.IntRange(200, used+used/8).Draw(t, "limit") // over budget most often
		spilled, changed := s.Fit(rs, executor.Budget{Limit: limit, Used: used, Floor: floor, Size: fitSize, Record: fitRecord})

		if used <= limit && (changed || spilled != nil || !slices.EqualFunc(before, rs, sameBounded)) {
			t.Fatalf("a commit within budget was changed")
		}
		if !changed && !slices.EqualFunc(before, rs, sameBounded) {
			t.Fatalf("Fit changed results, yet said it did not")
		}
		if total := commitSize(rs, spilled); total > limit {
			for i, r := range rs {
				// Media go to files last; a text is shortened to the marker
				// line naming its file (unless spilling it would take more
				// room than it frees, as beside media it may).
				first := r.Result.Parts[0].Text
				short := !slices.ContainsFunc(r.Result.Parts, func(p executor.Part) bool { return p.Type == executor.PartMedia }) &&
					(medias[i] != nil || len(r.Files) == 0 && fitSize(i, r) <= floor || len(r.Files) > 0 && first == executor.Marker(r.Files[0]) ||
						len(first) <= 1)
				if !short {
					t.Fatalf("the commit takes %d bytes, over %d, yet result %d could be shorter: %q", total, limit, i, r.Result.Text())
				}
			}
		}
		named := map[string]bool{}
		for i, r := range rs {
			if medias[i] == nil && fitSize(i, r) > fitSize(i, before[i]) { // a media's marker may outweigh a tiny media
				t.Fatalf("result %d grew from %d to %d", i, fitSize(i, before[i]), fitSize(i, r))
			}
			for _, f := range r.Files {
				named[f] = true
			}
			if text := r.Result.Parts[0].Text; text != wholes[i] {
				if len(r.Files) == 0 {
					t.Fatalf("result %d was shortened to %q without a file", i, text)
				}
				if b, err := os.ReadFile(r.Files[0]); err != nil || string(b) != wholes[i] {
					t.Fatalf("result %d: %s holds %d bytes (%v), want its whole text", i, r.Files[0], len(b), err)
				}
			}
			for _, p := range r.Result.Parts {
				if p.Type == executor.PartMedia && string(p.Data) != string(medias[i]) {
					t.Fatalf("result %d: its media changed", i)
				}
			}
			if medias[i] != nil && !slices.ContainsFunc(r.Result.Parts, func(p executor.Part) bool { return p.Type == executor.PartMedia }) {
				f := r.Files[len(r.Files)-1]
				if !strings.Contains(r.Result.Text(), executor.MediaMarker("image/png", len(medias[i]), f)) {
					t.Fatalf("result %d: %q does not name its media's file", i, r.Result.Text())
				}
				if b, err := os.ReadFile(f); err != nil || string(b) != string(medias[i]) {
					t.Fatalf("result %d: %s holds %d bytes (%v), want the media", i, f, len(b), err)
				}
			}
		}
		for _, sp := range spilled {
			if !named[sp.Path] {
				t.Fatalf("spilled to %s, which no result names", sp.Path)
			}
		}
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if !named[s.PathOf(strings.TrimPrefix(f.Name(), "tool_"))] {
				t.Fatalf("%s is left in the directory, named by no result", f.Name())
			}
		}
	})
}

func sameBounded(a, b executor.Bounded) bool {
	return a.Result.Text() == b.Result.Text() && len(a.Result.Parts) == len(b.Result.Parts) && slices.Equal(a.Files, b.Files)
}

// Fit shortens the largest result first and stops as soon as the commit
// fits: a commit one byte over its budget loses the largest result's
// tail to a file, and nothing else.
func TestFitShortensTheLargestFirst(t *testing.T) {
	s := newStore(t, t.TempDir())
	big, mid, small := lines(150, strings.Repeat("big line ", 6)), lines(150, strings.Repeat("mid ", 6)), "small"
	rs := []executor.Bounded{{Result: executor.TextResult(mid)}, {Result: executor.TextResult(big)}, {Result: executor.TextResult(small)}}
	used := commitSize(rs, nil)
	spilled, changed := s.Fit(rs, executor.Budget{Limit: used - 1, Used: used, Floor: 100, Size: fitSize, Record: fitRecord})
	if !changed || len(spilled) != 1 || len(rs[1].Files) != 1 || rs[1].Files[0] != spilled[0].Path {
		t.Fatalf("spilled %v, the largest result names %v; want one file, the largest's", spilled, rs[1].Files)
	}
	if !strings.Contains(rs[1].Result.Text(), executor.Marker(spilled[0].Path)) {
		t.Fatalf("the largest result is %q, not a preview naming its file", rs[1].Result.Text())
	}
	if rs[0].Result.Text() != mid || rs[0].Files != nil || rs[2].Result.Text() != small {
		t.Fatalf("the other results changed: %q %v, %q", rs[0].Result.Text(), rs[0].Files, rs[2].Result.Text())
	}
	if total := commitSize(rs, spilled); total > used-1 {
		t.Fatalf("the commit takes %d bytes, over %d", total, used-1)
	}
}
