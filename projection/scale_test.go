package projection

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A run waiting on a ticket costs its index entries, not its run: after a
// checkpoint no waiting run is in memory, none is left for recovery, and
// the tickets list in pages from the index, before and after a restart.
func TestWaitingRunsCostTheirIndexEntries(t *testing.T) {
	const n = 2000
	path := filepath.Join(t.TempDir(), "p.db")
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	before := heapInUse()
	tickets := w.fill(t, p, n)
	perRun := float64(int64(heapInUse())-int64(before)) / n
	p.mu.Lock()
	inMemory := len(p.runs)
	p.mu.Unlock()
	t.Logf("%d waiting runs: %.0f heap bytes a run, checkpoint %d bytes a run", n, perRun, dbSize(p)/n)
	if inMemory != 0 {
		t.Errorf("%d waiting runs in memory after a checkpoint, want none", inMemory)
	}
	if open := p.OpenRuns(); len(open) != 0 {
		t.Errorf("%d runs waiting only for answers are left for recovery", len(open))
	}
	if perRun > 4096 {
		t.Errorf("a waiting run costs %.0f heap bytes, want at most 4096", perRun)
	}
	for restarted := range 2 {
		if got := firstPage(t, p, 100); !slices.Equal(got, tickets[:100]) {
			t.Fatalf("restarted %d: first page %v, want the 100 oldest", restarted, got)
		}
		if cnt, oldest := p.PendingStats(); cnt != n || oldest != tickets[0] {
			t.Errorf("restarted %d: stats %d %s, want %d %s", restarted, cnt, oldest, n, tickets[0])
		}
		var walked []string
		for q := (PendingQuery{Limit: 700}); ; {
			page, more := p.PendingPage(q)
			for _, tk := range page {
				walked = append(walked, tk.ID)
			}
			if !more {
				break
			}
			q.After = page[len(page)-1].ID
		}
		if !slices.Equal(walked, tickets) {
			t.Fatalf("restarted %d: pages walked %d tickets, want each of %d once in order", restarted, len(walked), n)
		}
		p.mu.Lock()
		inMemory = len(p.runs)
		p.mu.Unlock()
		if inMemory != 0 {
			t.Errorf("restarted %d: reading a page kept %d runs in memory", restarted, inMemory)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if p, err = Open(path, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
}

// The filters of a page select what a scan of every ticket would, in the
// same order, page after page.
func TestPendingPageFilters(t *testing.T) {
	const n = 600
	p, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := newWaiting(start)
	w.fill(t, p, n)
	all, _ := p.PendingPage(PendingQuery{Limit: n + 1})
	if len(all) != n {
		t.Fatalf("%d pending, want %d", len(all), n)
	}
	cutoff := start.Add(250 * time.Millisecond) // run i is issued at start + i ms
	for _, q := range []PendingQuery{{Project: "p3"}, {Tool: "edit"}, {Run: all[17].Run}, {Project: "p4", Tool: "bash"},
		{IssuedBefore: cutoff}, {Project: "p1", IssuedBefore: cutoff}, {Project: "nope"}, {Tool: "edit", Run: all[3].Run}} {
		var want []string
		for _, tk := range all {
			if (q.Project == "" || tk.Project == q.Project) && (q.Tool == "" || tk.Tool == q.Tool) &&
				(q.Run == "" || tk.Run == q.Run) && (q.IssuedBefore.IsZero() || tk.ID < w.ids.New(cutoff)[:10]+"0000000000000000") {
				want = append(want, tk.ID)
			}
		}
		var got []string
		for q.Limit = 7; ; {
			page, more := p.PendingPage(q)
			for _, tk := range page {
				got = append(got, tk.ID)
			}
			if !more {
				break
			}
			if len(page) != q.Limit {
				t.Fatalf("%+v: a page of %d before the last", q, len(page))
			}
			q.After = page[len(page)-1].ID
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: pages give %d tickets, want %d", q, len(got), len(want))
		}
	}
}
