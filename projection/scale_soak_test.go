//go:build soak

package projection

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestWaitingRunsAtScale holds 100,000 waiting runs (SG_WAITING overrides
// the number) and measures what point 9 of the fleet issue bounds: the heap
// a waiting run costs, the checkpoint, how long a restart takes to load it
// (Open, and the recovery pass a host makes before it serves), and the
// first page of tickets.
func TestWaitingRunsAtScale(t *testing.T) {
	n := 100_000
	if s := os.Getenv("SG_WAITING"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	path := filepath.Join(t.TempDir(), "p.db")
	p, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	before := heapInUse()
	t0 := time.Now()
	w.fill(t, p, n)
	fillT := time.Since(t0)
	perRun := float64(int64(heapInUse())-int64(before)) / float64(n)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	size := checkpointSize(t, path)

	before = heapInUse()
	t0 = time.Now()
	if p, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	openT := time.Since(t0)
	t0 = time.Now()
	for _, run := range p.OpenRuns() { // what a host's recovery reads before it serves
		if _, _, err := p.Header(run); err != nil {
			t.Fatal(err)
		}
	}
	recoverT := time.Since(t0)
	t0 = time.Now()
	page := firstPage(t, p, 100)
	pageT := time.Since(t0)
	t0 = time.Now()
	cnt, _ := p.PendingStats()
	statsT := time.Since(t0)
	t0 = time.Now()
	due, shown := 0, map[string]string{"bash": w.catalog.Tools[0].Identity, "edit": w.catalog.Tools[0].Identity}
	now := w.now                           // before every deadline
	p.EachPending(func(tk PendingTicket) { // what the sweeper reads every second
		if tk.Deadline != nil && !now.Before(*tk.Deadline) || shown[tk.Tool] != tk.Identity {
			due++
		}
	})
	sweepT := time.Since(t0)
	reopened := float64(int64(heapInUse())-int64(before)) / float64(n)
	defer p.Close()
	t.Logf("%d waiting runs (folded in %v): heap %.0f B a run (%.0f B after a restart), checkpoint %d B (%d B a run)",
		n, fillT.Round(time.Millisecond), perRun, reopened, size, size/int64(n))
	t.Logf("restart: open %v, recovery pass %v; first page of %d tickets %v; pending count %d in %v; sweep pass %v (%d due)",
		openT.Round(time.Microsecond), recoverT.Round(time.Microsecond), len(page), pageT.Round(time.Microsecond), cnt, statsT,
		sweepT.Round(time.Microsecond), due)
	if perRun > 4096 || reopened > 4096 {
		t.Errorf("a waiting run costs %.0f B (%.0f B after a restart), want at most 4 KiB", perRun, reopened)
	}
	if openT+recoverT > 1500*time.Millisecond {
		t.Errorf("a restart takes %v to load, want at most 1.5s", openT+recoverT)
	}
	if pageT > 100*time.Millisecond || len(page) != 100 {
		t.Errorf("first page of %d tickets in %v, want 100 in at most 100ms", len(page), pageT)
	}
}
