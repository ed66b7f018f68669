package projection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
)

// echoStream is the stream engine bench w5 rebuilds, at a smaller size:
// runs runs of a start commit (the rules and catalogue of a default
// configuration) and 100 steps of one echo call of 200 printable bytes
// each, allowed by the default rule, encoded as the log stores them.
func echoStream(tb testing.TB, runs int) (msgs []message, evs int) {
	tb.Helper()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	w := newWaiting(at)
	ids := events.NewIDSource(nil)
	text := make([]byte, 200)
	for i := range text {
		text[i] = byte(' ' + (i*7)%95)
	}
	args, err := json.Marshal(map[string]string{"text": string(text)})
	if err != nil {
		tb.Fatal(err)
	}
	echo := w.catalog.Tools[0].Identity
	for i := range runs {
		run := ids.New(at)
		start := &events.Commit{ID: ids.New(at), Run: run, Kind: events.KindStart, At: at, Host: "bench",
			Events: []events.Event{events.RunStarted{Agent: "build", Location: fmt.Sprint("/srv/work/p", i), Project: "p",
				Rules: w.rules, Narrowing: "configured", Limits: events.OutputLimits{MaxLines: 2000, MaxBytes: 51200},
				PolicyDigest: "ab", EngineVersion: "dev"}, w.catalog}}
		cs := []*events.Commit{start}
		for n := 1; n <= 100; n++ {
			cs = append(cs, &events.Commit{ID: ids.New(at), Run: run, Step: n, Kind: events.KindStep, At: at, Host: "bench",
				Prev: cs[len(cs)-1].ID, Events: []events.Event{
					events.ToolCallRequested{CallID: "c1", Tool: "echo", Args: args, Identity: echo},
					events.PermissionDecided{CallID: "c1", Verdict: events.VerdictAllow, Reason: `allowed by rule * "*" (built-in default)`,
						Rule:     &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"},
						Requests: []events.Request{{Action: "echo", Resources: []string{string(text)}, Save: []string{"*"}}}},
					events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: string(text)}}},
					events.StepFinalized{Calls: 1},
				}})
		}
		for _, c := range cs {
			msgs = append(msgs, message{subject: events.RunSubject(run), data: encode(tb, c)})
			evs += len(c.Events)
		}
	}
	return msgs, evs
}

// memSource is a stream held in memory: msgs[i] at sequence i+1.
type memSource struct{ msgs []message }

func (m memSource) LastSeq(context.Context) (uint64, error) { return uint64(len(m.msgs)), nil }

func (m memSource) Get(_ context.Context, seq uint64) (string, []byte, bool, error) {
	if seq < 1 || seq > uint64(len(m.msgs)) {
		return "", nil, false, nil
	}
	return m.msgs[seq-1].subject, m.msgs[seq-1].data, true, nil
}

func (m memSource) Follow(ctx context.Context, from uint64, fn func(uint64, string, []byte) error) error {
	for seq := max(from, 1); seq <= uint64(len(m.msgs)); seq++ {
		if err := fn(seq, m.msgs[seq-1].subject, m.msgs[seq-1].data); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// BenchmarkRebuildFold is engine bench w5's rebuild without the server: a
// fresh projector follows 50 runs of 100 echo steps (20,100 events, 5,050
// commits) held in memory from sequence 1 until it has applied the last
// (decode, admit, fold, a checkpoint every 4,096 commits), then closes
// (its final checkpoint, outside the events/s).
func BenchmarkRebuildFold(b *testing.B) {
	msgs, evs := echoStream(b, 50)
	src := memSource{msgs}
	dir := b.TempDir()
	n := 0
	var folding time.Duration
	b.ReportAllocs()
	for b.Loop() {
		n++
		p := quietProjector(b, filepath.Join(dir, fmt.Sprint(n, ".db")))
		p.opts.FlushEvery = 4096
		ctx, cancel := context.WithCancel(b.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- p.Follow(ctx, src) }()
		if err := p.WaitFor(ctx, uint64(len(msgs))); err != nil {
			b.Fatal(err)
		}
		folding += time.Since(start)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			b.Fatal(err)
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
		if q := p.Quarantine(); q.Total != 0 {
			b.Fatalf("quarantined %d messages: %+v", q.Total, q.Recent)
		}
	}
	b.ReportMetric(float64(evs)*float64(b.N)/folding.Seconds(), "events/s")
}
