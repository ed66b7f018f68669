package projection

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// message is one message of a drawn stream: its subject and encoding.
type drawnMessage struct {
	subject string
	data    []byte
}

// genLog draws a stream of every subject the log uses: the fleet's run
// commits, interleaved with grants saved and revoked (a revocation may come
// first), tools registered and scopes closed, and output sweeps.
func genLog(t *rapid.T) []drawnMessage {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := events.NewIDSource(nil)
	var out []drawnMessage
	add := func(subject string, c *events.Commit) {
		b, err := events.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, drawnMessage{subject, b})
	}
	for _, c := range genFleet(t) {
		for range rapid.IntRange(0, 2).Draw(t, "outside commits") {
			outside := &events.Commit{ID: ids.New(at), Kind: events.KindGrant, At: at}
			project := fmt.Sprint("p", rapid.IntRange(0, 1).Draw(t, "project"))
			grant := fmt.Sprint("g", rapid.IntRange(0, 3).Draw(t, "grant"))
			scope := fmt.Sprint("s", rapid.IntRange(0, 2).Draw(t, "scope"))
			subject := events.GrantSubject(project)
			switch rapid.IntRange(0, 4).Draw(t, "outside kind") {
			case 0:
				outside.Events = []events.Event{events.ApprovalSaved{ID: grant, Project: project, Action: "bash",
					Resource: rapid.SampledFrom([]string{"git *", "ls"}).Draw(t, "resource"), Principal: "ops"}}
			case 1:
				outside.Events = []events.Event{events.GrantRevoked{ID: grant, Project: project, Principal: "sec"}}
			case 2:
				outside.Kind, subject = events.KindRegistry, events.RegistrySubject(scope)
				outside.Events = []events.Event{events.ToolRegistered{Scope: scope, Name: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "tool"),
					InputSchema: []byte(`{}`), Action: "read", Effect: "read_only", Identity: "i"}}
			case 3:
				outside.Kind, subject = events.KindRegistry, events.RegistrySubject(scope)
				outside.Events = []events.Event{events.ScopeClosed{Scope: scope}}
			default:
				outside.Kind, subject = events.KindSweep, events.OutputSubject
				outside.Events = []events.Event{events.OutputFileSwept{Paths: []string{"x"}}}
			}
			add(subject, outside)
		}
		add(events.RunSubject(c.Run), c)
	}
	return out
}

// A rebuild to any sequence of a stream of every subject equals, projection
// by projection, a projector that folded the same prefix (restarting from
// its checkpoint on the way): the runs, the registry, the grants, the
// output files, the open runs and the quarantine.
func TestRebuildToAnySeqEqualsTheProjectorProperty(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		msgs := genLog(t)
		upTo := rapid.IntRange(0, len(msgs)).Draw(t, "up to")
		n++
		path := filepath.Join(dir, fmt.Sprint(n, ".db"))
		p := quietProjector(t, path)
		for i, m := range msgs[:upTo] {
			if err := p.applyStream(uint64(i+1), m.subject, m.data); err != nil {
				t.Fatalf("applyStream at %d: %v", i+1, err)
			}
			if rapid.IntRange(0, 9).Draw(t, "restart?") == 0 {
				if err := p.Close(); err != nil {
					t.Fatal(err)
				}
				p = quietProjector(t, path)
			}
		}
		defer p.Close()
		got, err := p.Projections()
		if err != nil {
			t.Fatal(err)
		}
		rb := newRebuilt()
		for i, m := range msgs[:upTo] {
			rb.fold(uint64(i+1), m.subject, m.data)
		}
		want, err := rb.finish(uint64(upTo))
		if err != nil {
			t.Fatal(err)
		}
		if len(want.GrantLog) == 0 {
			want.GrantLog = nil // a projector keeps no grant log
		}
		got.GrantLog = want.GrantLog
		if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Rebuilt{})); d != "" {
			t.Fatalf("at sequence %d of %d (-rebuild +projector):\n%s", upTo, len(msgs), d)
		}
	})
}
