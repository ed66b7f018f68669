package bench

import (
	"math"
	"slices"
	"time"
)

// Result is one workload's JSON line. Keys are stable: tools read them.
type Result map[string]any

func newResult(o Options) Result {
	return Result{"workload": o.Workload, "sync": o.sync(), "quick": o.Quick}
}

// percentile returns the p-th percentile (0–100) of ds in milliseconds.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	i = max(0, min(i, len(s)-1))
	return ms(s[i])
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return math.Round((s[len(s)/2-1] + s[len(s)/2]) / 2)
}

func ms(d time.Duration) float64 { return round(float64(d) / float64(time.Millisecond)) }

func perSecond(n int, d time.Duration) float64 { return math.Round(float64(n) / d.Seconds()) }

// window is one timed stretch of a workload: n steps (or messages), and the
// wall-clock and process CPU time they took.
type window struct {
	n         int
	wall, cpu time.Duration
}

// timed runs fn as a window of n steps. Collections fall where they fall:
// a window that started from a collected heap would leave out the cost of
// the garbage it makes, more of it the more it makes.
func timed(n int, fn func() error) (window, error) {
	start, cpu0 := time.Now(), cpuTime()
	err := fn()
	return window{n: n, wall: time.Since(start), cpu: cpuTime() - cpu0}, err
}

// rate is the window's steps per second.
func (w window) rate() float64 { return perSecond(w.n, w.wall) }

// medianOf is the median of f over the windows (window.rate, say).
func medianOf(ws []window, f func(window) float64) float64 {
	xs := make([]float64, len(ws))
	for i, w := range ws {
		xs[i] = f(w)
	}
	return median(xs)
}

// cpuPer is the process CPU time per step, in microseconds.
func (w window) cpuPer() float64 {
	return math.Round(float64(w.cpu)/float64(time.Microsecond)/float64(w.n)*10) / 10
}

func round(f float64) float64 { return math.Round(f*1000) / 1000 }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a / b)
}
