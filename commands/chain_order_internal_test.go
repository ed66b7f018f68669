package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// readsOf prepares a read of each path in loc, as planned calls.
func readsOf(t testing.TB, loc string, paths ...string) []*planned {
	t.Helper()
	tool, err := builtin.Read()
	if err != nil {
		t.Fatal(err)
	}
	var out []*planned
	for i, p := range paths {
		prep, err := tool.Prepare(executor.Call{Location: loc}, fmt.Appendf(nil, `{"path":%q}`, p))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &planned{req: CallRequest{ID: fmt.Sprint(i)}, tool: tool, prepared: prep})
	}
	return out
}

// Calls linked by a shared real path, directly or through another call,
// form one chain in model order; a symlink to a file is the file.
func TestChains(t *testing.T) {
	loc := t.TempDir()
	var (
		many                []string
		manyAlone, manyWant [][]string
	)
	for i := range 20 {
		n := fmt.Sprintf("m%02d", i)
		if err := os.WriteFile(filepath.Join(loc, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		many = append(many, n)
		manyWant = append(manyWant, []string{fmt.Sprint(i)})
		manyAlone = append(manyAlone, []string{fmt.Sprint(i)})
	}
	manyWant[3] = append(manyWant[3], "20") // m03 again, past the pairwise bound
	for _, n := range []string{"a", "b", "c", "d"} {
		if err := os.WriteFile(filepath.Join(loc, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(loc, "to-a")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		why   string
		paths []string
		want  [][]string // chains, by call id
	}{
		{"no path in common", []string{"a", "b", "c"}, [][]string{{"0"}, {"1"}, {"2"}}},
		{"one file twice", []string{"a", "b", "a"}, [][]string{{"0", "2"}, {"1"}}},
		{"through a symlink", []string{"to-a", "b", "a"}, [][]string{{"0", "2"}, {"1"}}},
		{"two pairs interleaved", []string{"a", "b", "a", "b", "c"}, [][]string{{"0", "2"}, {"1", "3"}, {"4"}}},
		{"one file, model order", []string{"d", "d", "d", "d"}, [][]string{{"0", "1", "2", "3"}}},
		{"many calls, no path in common", many, manyAlone},
		{"many calls, one file twice", append(many, "m03"), manyWant},
	} {
		calls := readsOf(t, loc, tt.paths...)
		chained := chains(calls)
		if chained == nil { // no sharing: every call alone
			for _, c := range calls {
				chained = append(chained, []*planned{c})
			}
		} else if len(chained) == len(calls) {
			t.Errorf("%s: chains without sharing, want nil", tt.why)
		}
		var got [][]string
		for _, ch := range chained {
			var ids []string
			for _, c := range ch {
				ids = append(ids, c.req.ID)
			}
			got = append(got, ids)
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, d)
		}

	}
}

// BenchmarkChains is what runAll adds to a step of four calls on four files
// before running them as it did.
func BenchmarkChains(b *testing.B) {
	loc := b.TempDir()
	for _, n := range []string{"a", "b", "c", "d"} {
		if err := os.WriteFile(filepath.Join(loc, n), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	calls := readsOf(b, loc, "a", "b", "c", "d")
	b.ReportAllocs()
	for b.Loop() {
		if chains(calls) != nil {
			b.Fatal("shared")
		}
	}
}
