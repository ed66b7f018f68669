package projection

import (
	"encoding/json"
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

// BenchmarkRebuildFold is engine bench w5's rebuild without the stream:
// a fresh projector folds 50 runs of 100 echo steps (20,100 events, 5,050
// commits) from their stored bytes, as Follow hands them over (decode,
// admit, fold, a checkpoint every 4,096 commits and a final one).
func BenchmarkRebuildFold(b *testing.B) {
	msgs, evs := echoStream(b, 50)
	dir := b.TempDir()
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		n++
		p := quietProjector(b, filepath.Join(dir, fmt.Sprint(n, ".db")))
		p.opts.FlushEvery = 4096
		for i, m := range msgs {
			if err := p.applyStream(uint64(i+1), m.subject, m.data); err != nil {
				b.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
		if q := p.Quarantine(); q.Total != 0 {
			b.Fatalf("quarantined %d messages: %+v", q.Total, q.Recent)
		}
	}
	b.ReportMetric(float64(evs)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
