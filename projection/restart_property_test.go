package projection

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// genFleet draws the interleaved stream of a few runs: each starts, then
// takes steps that are allowed, or ask and wait on a ticket that may be
// approved (and the call run) or rejected, and may end; each commit is made
// by one of two hosts (so calls run on either). Every run shares
// its rules and catalogue with the others, or has its own.
func genFleet(t *rapid.T) []*events.Commit {
	ids := events.NewIDSource(nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	shared := []events.Rule{{Action: "*", Resource: "*", Effect: "allow"}, {Action: "bash", Resource: "git push*", Effect: "ask"}}
	var runs [][]*events.Commit
	for r := range rapid.IntRange(1, 5).Draw(t, "runs") {
		run := ids.New(at.Add(time.Duration(r) * time.Second))
		rules := shared
		if rapid.Bool().Draw(t, "own rules") {
			rules = []events.Rule{{Action: "read", Resource: fmt.Sprint("r", r), Effect: "deny"}}
		}
		mkc := func(step int, kind events.Kind, evs ...events.Event) *events.Commit {
			host := rapid.SampledFrom([]string{"h1", "h2"}).Draw(t, "host")
			return &events.Commit{ID: ids.New(at), Run: run, Step: step, Kind: kind, At: at, Host: host, Events: evs}
		}
		cs := []*events.Commit{mkc(0, events.KindStart, events.RunStarted{Agent: "build", Project: fmt.Sprint("p", r%2), Rules: rules},
			events.CatalogAdvertised{Fingerprint: "f", Tools: []events.AdvertisedTool{{Name: "bash", Identity: "b1"}}})}
		for n := 1; n <= rapid.IntRange(0, 4).Draw(t, "steps"); n++ {
			call := fmt.Sprint("c", n)
			req := events.ToolCallRequested{CallID: call, Tool: "bash", Args: []byte(`{"command":"git push"}`), Identity: "b1"}
			if !rapid.Bool().Draw(t, "asks") {
				cs = append(cs, mkc(n, events.KindStep, req, events.PermissionDecided{CallID: call, Verdict: events.VerdictAllow},
					events.ToolResultRecorded{CallID: call}, events.StepFinalized{Calls: 1}))
				continue
			}
			ticket := ids.New(at.Add(time.Duration(n) * time.Minute))
			dl := at.Add(time.Hour)
			cs = append(cs, mkc(n, events.KindDecide, req, events.PermissionDecided{CallID: call, Verdict: events.VerdictConfirm},
				events.TicketIssued{ID: ticket, CallID: call, Tool: "bash", Identity: "b1", Kind: "permission", Deadline: &dl, Project: fmt.Sprint("p", r%2)},
				events.StepAwaiting{Tickets: []string{ticket}}))
			switch rapid.IntRange(0, 2).Draw(t, "answer") {
			case 0: // still waiting: the run takes no more steps
				n = 1 << 20
			case 1:
				cs = append(cs, mkc(n, events.KindResolve, events.TicketResolved{Ticket: ticket, CallID: call, Reply: "once", Approved: true},
					events.ToolCallStarted{CallID: call, Attempt: 1}),
					mkc(n, events.KindSettle, events.ToolResultRecorded{CallID: call}, events.StepFinalized{Calls: 1}))
			default:
				cs = append(cs, mkc(n, events.KindResolve, events.TicketResolved{Ticket: ticket, CallID: call, Reply: "reject"},
					events.ToolResultRecorded{CallID: call, IsError: true}, events.StepFinalized{Calls: 1}))
			}
		}
		if last := cs[len(cs)-1]; last.Kind != events.KindDecide && rapid.Bool().Draw(t, "end") {
			cs = append(cs, mkc(0, events.KindEnd, events.RunEnded{Cause: events.CauseCompleted}))
		}
		for i := 1; i < len(cs); i++ {
			cs[i].Prev = cs[i-1].ID
		}
		runs = append(runs, cs)
	}
	var out []*events.Commit
	for len(runs) > 0 { // interleave the runs, each in its own order
		i := rapid.IntRange(0, len(runs)-1).Draw(t, "next run")
		out = append(out, runs[i][0])
		if runs[i] = runs[i][1:]; len(runs[i]) == 0 {
			runs = append(runs[:i], runs[i+1:]...)
		}
	}
	return out
}

// state is what a projector answers, for comparison.
type state struct {
	Runs    map[string]*Run
	Pending []PendingTicket
	Open    []string
	Count   int
	Oldest  string
	Tickets map[string]string
}

func stateOf(t *rapid.T, p *Projector, cs []*events.Commit) state {
	runs, err := p.All()
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := p.PendingPage(PendingQuery{Limit: 1000})
	for i := range pending {
		if d := pending[i].Deadline; d != nil {
			u := d.UTC()
			pending[i].Deadline = &u
		}
	}
	s := state{Runs: runs, Pending: pending, Open: p.OpenRuns(), Tickets: map[string]string{}}
	s.Count, s.Oldest = p.PendingStats()
	for _, c := range cs {
		for _, e := range c.Events {
			if ti, ok := e.(events.TicketIssued); ok {
				s.Tickets[ti.ID] = p.TicketRun(ti.ID)
			}
		}
	}
	return s
}

// A projector that restarts from its checkpoint at random points — some
// after a clean close, some after a crash that loses what it folded since
// its last checkpoint (it reads that tail again) — ends in the state of one
// that never stopped: the same runs, the same pending tickets in the same
// order, the same open runs and ticket owners.
func TestRestartAnywhereEqualsNeverStopped(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		cs := genFleet(t)
		data := make([][]byte, len(cs))
		for i, c := range cs {
			b, err := events.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			data[i] = b
		}
		apply := func(p *Projector, i int) {
			if err := p.applyStream(uint64(i+1), events.RunSubject(cs[i].Run), data[i]); err != nil {
				t.Fatal(err)
			}
		}
		open := func(path string) *Projector {
			p, err := Open(path, Options{FlushEvery: rapid.IntRange(1, 8).Draw(t, "flush every")})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		base := filepath.Join(dir, fmt.Sprint(time.Now().UnixNano()))
		steady := open(base + "-steady.db")
		defer steady.Close()
		for i := range cs {
			apply(steady, i)
		}
		path := base + "-restarted.db"
		p := open(path)
		for i := 0; i < len(cs); {
			apply(p, i)
			i++
			if i == len(cs) || !rapid.Bool().Draw(t, "restart") {
				continue
			}
			if rapid.Bool().Draw(t, "crash") {
				p.db.Close() // what it folded since its last checkpoint is lost
			} else if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			p = open(path)
			i = int(p.Seq()) // the stream delivers again from the checkpoint on
		}
		defer p.Close()
		if d := cmp.Diff(stateOf(t, steady, cs), stateOf(t, p, cs)); d != "" {
			t.Fatalf("restarted projector differs from one that never stopped (-steady +restarted):\n%s", d)
		}
	})
}
