package integration

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step/steptest"
)

// While one host submits steps of several calls (side-effecting ones, so
// each step is a decide and a settle commit), an observer host following the
// stream never sees part of a step: a visible step always holds every one of
// its calls with its verdict, and a final step has every result.
func TestStepIsNeverPartiallyVisible(t *testing.T) {
	s := steptest.Start(t, "")
	reg := newCounted(t).reg
	writer := startHost(t, s, reg, "writer", "")
	observer := startHost(t, s, reg, "observer", "")
	ctx := ctxT(t)
	info, err := writer.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const steps, calls = 60, 4
	done := make(chan struct{})
	var wg sync.WaitGroup
	var seen, violations []string
	var looks atomic.Int64 // the observer's looks at the run, for the writer to wait on
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// The header holds the last step; every earlier one is final,
			// read on its own.
			h, ok, err := observer.Proj.Header(info.Run)
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				for n := 1; n <= h.Steps; n++ {
					st := h.Last
					if n < h.Steps {
						if st, _, err = observer.Proj.Step(info.Run, n); err != nil {
							t.Error(err)
							return
						}
					}
					if len(st.Calls) != calls {
						violations = append(violations, fmt.Sprintf("step %d visible with %d of %d calls", st.N, len(st.Calls), calls))
					}
					terminal := 0
					for _, c := range st.Calls {
						if c.Decision == nil {
							violations = append(violations, fmt.Sprintf("step %d call %s visible without its verdict", st.N, c.ID))
						}
						if c.Terminal() {
							terminal++
						}
					}
					if terminal != 0 && terminal != calls {
						violations = append(violations, fmt.Sprintf("step %d visible with %d of %d results", st.N, terminal, calls))
					}
					if st.Final && terminal != calls {
						violations = append(violations, fmt.Sprintf("step %d final without every result", st.N))
					}
				}
				seen = append(seen, fmt.Sprint(h.Steps))
				looks.Add(1)
			}
		}
	})
	for n := 1; n <= steps; n++ {
		var cs []commands.CallRequest
		for i := range calls {
			tool := "count_fx"
			if i%2 == 1 {
				tool = "count"
			}
			cs = append(cs, call(fmt.Sprintf("c%d", i), tool, fmt.Sprint(n, i)))
		}
		if _, err := writer.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n, Calls: cs}); err != nil {
			t.Fatal(err)
		}
		if n%(steps/10) == 0 { // the observer looks at least ten times however busy the machine
			waitLook(t, &looks, looks.Load())
		}
	}
	caughtUp(t, writer, observer)
	close(done)
	wg.Wait()
	if len(violations) > 0 {
		t.Fatalf("%d partial views, first: %s", len(violations), violations[0])
	}
	if len(seen) < 10 {
		t.Fatalf("the observer looked only %d times", len(seen))
	}
	final, err := observer.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	if len(final.Steps) != steps || !final.Steps[steps-1].Final {
		t.Errorf("observer ends with %d steps, want %d final", len(final.Steps), steps)
	}
}

// waitLook waits (up to 20 s) until the observer has looked again since it
// had looked before times.
func waitLook(t *testing.T, looks *atomic.Int64, before int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for looks.Load() <= before {
		if time.Now().After(deadline) {
			t.Fatalf("the observer did not look at the run within 20 s (%d looks)", before)
		}
		time.Sleep(time.Millisecond)
	}
}
