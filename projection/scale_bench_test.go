package projection

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWaitingRunMemory reports what one waiting run costs: heap bytes
// (B/run), checkpoint bytes (ckpt-B/run), and the time to read the first
// page of 100 tickets among them (page-µs), at 20,000 waiting runs.
func BenchmarkWaitingRunMemory(b *testing.B) {
	const n = 20_000
	for range b.N {
		path := filepath.Join(b.TempDir(), "p.db")
		p, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		w := newWaiting(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		before := heapInUse()
		w.fill(b, p, n)
		b.ReportMetric(float64(int64(heapInUse())-int64(before))/n, "B/run")
		t0 := time.Now()
		firstPage(b, p, 100)
		b.ReportMetric(float64(time.Since(t0).Microseconds()), "page-µs")
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(checkpointSize(b, path))/n, "ckpt-B/run")
	}
}
