package projection

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	bolt "go.etcd.io/bbolt"
)

// waiting makes runs that each wait on one ticket, as the engine writes
// them: a start with the built-in rules of the build agent and a catalogue
// of ten tools, then one step of one bash call whose verdict asks.
type waiting struct {
	ids     *events.IDSource
	now     time.Time
	rules   []events.Rule
	catalog events.CatalogAdvertised
	seq     uint64
}

func newWaiting(now time.Time) *waiting {
	w := &waiting{ids: events.NewIDSource(nil), now: now}
	for _, r := range [][3]string{{"*", "*", "allow"}, {"external_directory", "*", "ask"},
		{"external_directory", "/tmp/*", "allow"}, {"external_directory", "/home/agent/.local/share/stepgate/tool-output/*", "allow"},
		{"read", "*.env", "ask"}, {"read", "*.env.*", "ask"}, {"read", "*.env.example", "allow"},
		{"edit", ".stepgate/**", "ask"}, {"edit", ".git/**", "ask"}, {"bash", "git push*", "ask"}} {
		w.rules = append(w.rules, events.Rule{Action: r[0], Resource: r[1], Effect: r[2], Source: "default"})
	}
	for _, name := range []string{"bash", "read", "write", "edit", "glob", "grep", "list", "webfetch", "todowrite", "task"} {
		sum := sha256.Sum256([]byte("tool " + name))
		w.catalog.Tools = append(w.catalog.Tools, events.AdvertisedTool{Name: name, Identity: "builtin:" + name + "@" + hex.EncodeToString(sum[:])})
	}
	sum := sha256.Sum256([]byte("catalog"))
	w.catalog.Fingerprint = hex.EncodeToString(sum[:])
	return w
}

// run returns the two commits of waiting run i, and its ticket's id.
func (w *waiting) run(i int) (run string, ticket string, cs []*events.Commit) {
	at := w.now.Add(time.Duration(i) * time.Millisecond)
	run = w.ids.New(at)
	project := fmt.Sprintf("p%d", i%10)
	start := &events.Commit{ID: w.ids.New(at), Run: run, Kind: events.KindStart, At: at, Host: "h1",
		Events: []events.Event{events.RunStarted{Agent: "build", Location: "/srv/work/" + project, Project: project,
			Rules: w.rules, Narrowing: "configured", Limits: events.OutputLimits{MaxLines: 2000, MaxBytes: 51200},
			PolicyDigest: strings.Repeat("ab", 32), EngineVersion: "v0.11.0"}, w.catalog}}
	ticket = w.ids.New(at)
	req := []events.Request{{Action: "bash", Resources: []string{"git push --force origin main"}, Save: []string{"git push *"}}}
	tool := "bash"
	if i%3 == 0 {
		tool = "edit"
	}
	dl := at.Add(24 * time.Hour)
	stepC := &events.Commit{ID: w.ids.New(at), Run: run, Step: 1, Kind: events.KindDecide, At: at, Host: "h1", Prev: start.ID,
		Events: []events.Event{
			events.ToolCallRequested{CallID: "call_" + strconv.Itoa(i), Tool: tool, Args: []byte(`{"command":"git push --force origin main","description":"Push the branch"}`),
				Identity: w.catalog.Tools[0].Identity},
			events.PermissionDecided{CallID: "call_" + strconv.Itoa(i), Verdict: events.VerdictConfirm,
				Reason: `confirmation required by rule bash "git push*" (default)`, Requests: req},
			events.TicketIssued{ID: ticket, CallID: "call_" + strconv.Itoa(i), Tool: tool, Identity: w.catalog.Tools[0].Identity,
				ArgsSHA: strings.Repeat("cd", 32), Requests: req, Kind: "permission", PolicySHA: strings.Repeat("ab", 32),
				Deadline: &dl, Project: project},
			events.StepAwaiting{Tickets: []string{ticket}},
		}}
	return run, ticket, []*events.Commit{start, stepC}
}

// fill folds n waiting runs into p through the follower's path (encoded,
// in stream order, checkpointed every FlushEvery commits), then writes a
// checkpoint. It returns the runs' tickets, oldest first.
func (w *waiting) fill(tb testing.TB, p *Projector, n int) []string {
	tb.Helper()
	tickets := make([]string, 0, n)
	for i := range n {
		run, ticket, cs := w.run(i)
		for _, c := range cs {
			data, err := events.Marshal(c)
			if err != nil {
				tb.Fatal(err)
			}
			w.seq++
			if err := p.applyStream(w.seq, events.RunSubject(run), data); err != nil {
				tb.Fatal(err)
			}
		}
		tickets = append(tickets, ticket)
	}
	if err := p.Flush(); err != nil {
		tb.Fatal(err)
	}
	return tickets
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// dbSize is checkpointSize of an open projector's checkpoint.
func dbSize(p *Projector) int64 {
	var size int64
	_ = p.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	return size
}

// checkpointSize is the size of the checkpoint at path: its pages up to
// the last one in use (the file itself grows in large steps ahead of them).
func checkpointSize(tb testing.TB, path string) int64 {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var size int64
	if err := db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		tb.Fatal(err)
	}
	return size
}

// firstPage reads the first page of tickets as the engine's Tickets does:
// the index's page, then one cold view of each ticket's run.
func firstPage(tb testing.TB, p *Projector, limit int) []string {
	tb.Helper()
	page, _ := p.PendingPage(PendingQuery{Limit: limit})
	out := make([]string, 0, len(page))
	for _, t := range page {
		r, ok, err := p.HeaderCold(t.Run)
		if err != nil || !ok {
			tb.Fatalf("view run %s: %v, %v", t.Run, ok, err)
		}
		if tk := r.Ticket(t.ID); tk != nil && tk.Pending() && r.Step(t.Step).Call(tk.CallID) != nil {
			out = append(out, t.ID)
		}
	}
	return out
}
