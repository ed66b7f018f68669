package projection

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The sweeper's pass over every pending ticket does not hold the projector
// for the whole index: fn runs outside the lock (here it calls the
// projector, which would deadlock under it), and every ticket is seen once,
// oldest first, across the chunks.
func TestEachPendingWalksInChunksOutsideTheLock(t *testing.T) {
	p, err := Open(filepath.Join(t.TempDir(), "p.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	n := 2*eachPendingChunk + 7
	tickets := w.fill(t, p, n)
	done := make(chan []string)
	go func() {
		var seen []string
		p.EachPending(func(tk PendingTicket) {
			if c, _ := p.PendingStats(); c != n {
				t.Errorf("PendingStats inside the walk: %d, want %d", c, n)
			}
			seen = append(seen, tk.ID)
		})
		done <- seen
	}()
	select {
	case seen := <-done:
		want := slices.Sorted(slices.Values(tickets))
		if !slices.Equal(seen, want) {
			t.Errorf("walked %d tickets, want the %d pending ones in id order", len(seen), len(want))
		}
		p.Close()
	case <-time.After(10 * time.Second):
		// The walk is stuck on the lock it holds; the projector is left
		// to the process's end.
		t.Fatal("EachPending holds the projector's lock while it calls fn")
	}
}
