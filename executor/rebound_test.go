package executor_test

import (
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/stepgate/stepgate/executor"
)

// A result Bound spilled, shortened again by Rebound to any limits, names
// the same file (which still holds the whole output, and no other file is
// written), starts with a prefix and ends with a suffix of the whole
// output, and is within the limits (the marker line alone may exceed tiny
// ones).
func TestReboundKeepsTheHeadAndTailOfTheWholeOutput(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	rapid.Check(t, func(t *rapid.T) {
		line := rapid.StringMatching(`[a-z0-9 é]{0,40}`)
		whole := strings.Join(rapid.SliceOfN(line, 1, 300).Draw(t, "lines"), "\n")
		first := executor.Limits{MaxLines: rapid.IntRange(5, 200).Draw(t, "lines1"), MaxBytes: rapid.IntRange(200, 4000).Draw(t, "bytes1")}
		bounded, sp := s.Bound(executor.TextResult(whole), first)
		if sp == nil {
			return // within the first limits: nothing to shorten
		}
		second := executor.Limits{MaxLines: rapid.IntRange(1, 200).Draw(t, "lines2"), MaxBytes: rapid.IntRange(1, 4000).Draw(t, "bytes2")}
		files, _ := os.ReadDir(dir)
		short := s.Rebound(bounded, sp.Path, second).Text()
		if again, _ := os.ReadDir(dir); len(again) != len(files) {
			t.Fatalf("Rebound wrote a file")
		}
		marker := executor.Marker(sp.Path)
		if strings.Count(short, marker) != 1 {
			t.Fatalf("%q does not name its file once", short)
		}
		head, tail, _ := strings.Cut(short, marker)
		head, tail = strings.TrimSuffix(head, "\n\n"), strings.TrimPrefix(tail, "\n\n")
		if !strings.HasPrefix(whole, head) || !strings.HasSuffix(whole, tail) {
			t.Fatalf("head %q / tail %q are not the whole output's", head, tail)
		}
		if fits := short == marker || len(short) <= second.MaxBytes && strings.Count(short, "\n")+1 <= max(second.MaxLines, 1); !fits {
			t.Fatalf("%d bytes, %d lines over %+v", len(short), strings.Count(short, "\n")+1, second)
		}
		if b, err := os.ReadFile(sp.Path); err != nil || string(b) != whole {
			t.Fatalf("the file holds %d bytes (%v), want the whole output", len(b), err)
		}
	})
}
