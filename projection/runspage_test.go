package projection

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
)

// Pages of runs, walked with any page size, list every run once, in the
// order of the whole listing: runs only in the checkpoint, runs only in
// memory (folded since), and after a checkpoint and a restart.
func TestRunsPagesListEveryRunOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	w.fill(t, p, 300) // checkpointed, none in memory
	for i := 300; i < 350; i++ {
		run, _, cs := w.run(i)
		for _, c := range cs {
			data, err := events.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			w.seq++
			if err := p.applyStream(w.seq, events.RunSubject(run), data); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.mu.Lock()
	inMemory := len(p.runs)
	p.mu.Unlock()
	if inMemory == 0 {
		t.Fatal("no run in memory: the test does not mix the two")
	}
	check := func(when string) {
		all, err := p.Runs()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 350 {
			t.Fatalf("%s: %d runs listed, want 350", when, len(all))
		}
		for _, limit := range []int{1, 7, 100, 350, 1000} {
			var walked []Summary
			for after, pages := "", 0; ; pages++ {
				page, more, err := p.RunsPage(after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > limit || more && len(page) != limit || pages > 350 {
					t.Fatalf("%s: a page of %d runs (limit %d, more %v)", when, len(page), limit, more)
				}
				walked = append(walked, page...)
				if !more {
					break
				}
				after = page[len(page)-1].ID
			}
			if !slices.Equal(walked, all) {
				t.Fatalf("%s: pages of %d walked %d runs, want the %d of the listing, once each, in order", when, limit, len(walked), len(all))
			}
		}
		if page, more, err := p.RunsPage(all[len(all)-1].ID, 10); err != nil || len(page) != 0 || more {
			t.Errorf("%s: past the last run: %d runs, more %v, %v", when, len(page), more, err)
		}
	}
	check("mixed")
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	check("checkpointed")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	check("restarted")
	p.Close()
}
