package projection

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stepgate/stepgate/events"
)

// FuzzRebuildEqualsProjector stores one message of arbitrary bytes on one
// of the log's subjects among a run's history, a grant saved and a tool
// registered: a rebuild to every sequence folds it exactly as the live
// projector and its reloaded checkpoint do, in every projection (runs,
// registry, grants, outputs, open runs, quarantine), and never panics.
func FuzzRebuildEqualsProjector(f *testing.F) {
	for i, s := range [][]byte{
		nil, []byte(`{}`),
		[]byte(`{"id":"x","kind":"grant","at":"2026-12-01T00:00:00Z","events":[{"type":"GrantRevoked","v":1,"data":{"id":"g1","project":"p"}}]}`),
		[]byte(`{"id":"x","kind":"registry","at":"2026-12-01T00:00:00Z","events":[{"type":"ScopeClosed","v":1,"data":{"scope":"s"}}]}`),
		[]byte(`{"id":"x","kind":"sweep","at":"2026-12-01T00:00:00Z","events":[{"type":"OutputFileSwept","v":1,"data":{"paths":["o"]}}]}`),
		[]byte(`{"id":"x","kind":"grant","at":"2026-12-01T00:00:00Z","events":[{"type":"ApprovalSaved","v":1,"data":{"id":"g2","project":"p","action":"bash","resource":"*"}}]}`),
	} {
		f.Add(s, uint8(i))
	}
	dir := f.TempDir()
	n := 0
	f.Fuzz(func(t *testing.T, data []byte, where uint8) {
		run := "01VICTIM"
		subjects := []string{events.RunSubject(run), events.RegistrySubject("s"), events.OutputSubject,
			events.GrantSubject("p"), "sg.elsewhere"}
		subject := subjects[int(where)%len(subjects)]
		var msgs []message
		for _, c := range fuzzHistory(run, 2) {
			msgs = append(msgs, message{subject: events.RunSubject(run), data: encode(t, c)})
		}
		msgs = append(msgs,
			message{subject: events.GrantSubject("p"), data: encode(t, &events.Commit{ID: "g", Kind: events.KindGrant, At: hostileAt,
				Events: []events.Event{events.ApprovalSaved{ID: "g1", Project: "p", Action: "bash", Resource: "ls"}}})},
			message{subject: subject, data: data},
			message{subject: events.RegistrySubject("s"), data: encode(t, &events.Commit{ID: "r", Kind: events.KindRegistry, At: hostileAt,
				Events: []events.Event{events.ToolRegistered{Scope: "s", Name: "t", InputSchema: []byte(`{}`)}}})})
		n++
		path := filepath.Join(dir, fmt.Sprint(n, ".db"))
		p := quietProjector(t, path)
		defer func() { p.Close() }()
		rb := newRebuilt()
		for i, m := range msgs {
			seq := uint64(i + 1)
			if err := p.applyStream(seq, m.subject, m.data); err != nil {
				t.Fatalf("applyStream at %d: %v", seq, err)
			}
			rb.fold(seq, m.subject, m.data)
			if i == len(msgs)-1 { // and once more, from the checkpoint
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				p = quietProjector(t, path)
			}
			got, err := p.Projections()
			if err != nil {
				t.Fatal(err)
			}
			snap := *rb
			snap.Runs = map[string]*Run{}
			for id, r := range rb.Runs {
				snap.Runs[id] = r
			}
			want, err := snap.finish(seq)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Rebuilt{}), cmpopts.IgnoreFields(Rebuilt{}, "GrantLog")); d != "" {
				t.Fatalf("at sequence %d, the message on %s being %q (-rebuild +projector):\n%s", seq, subject, data, d)
			}
		}
	})
}
