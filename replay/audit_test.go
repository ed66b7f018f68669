package replay

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// commit is a run commit at t0 plus ms milliseconds.
type msg struct {
	subject string
	c       *events.Commit
}

func commit(run string, step int, ms int, es ...events.Event) msg {
	return msg{events.RunSubject(run), &events.Commit{ID: run + "-" + time.Duration(ms).String(), Run: run, Step: step, Kind: events.KindStep,
		At: t0.Add(time.Duration(ms) * time.Millisecond), Events: es}}
}

func req(id, cmd string) []events.Event {
	return []events.Event{events.ToolCallRequested{CallID: id, Tool: "bash"},
		events.PermissionDecided{CallID: id, Verdict: events.VerdictConfirm, Rule: &events.Rule{Action: "bash", Resource: "*", Effect: "ask", Source: "run"},
			Requests: []events.Request{{Action: "bash", Resources: []string{cmd}, Save: []string{cmd}}}}}
}

func add(t *testing.T, a *Auditor, m msg) []AuditRow {
	t.Helper()
	rows, err := a.Add(m.subject, m.c)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// An "always" approves the step's other ticket (auto, by it): the row of
// the other call names the grant the always saved; an expired ticket says
// so; a call still open when the run ends is a row marked open; state
// goes with the run.
func TestAuditResolutionsAndOpenCalls(t *testing.T) {
	a := NewAuditor(AuditFilter{})
	add(t, a, commit("r1", 0, 0, events.RunStarted{Project: "p"}))
	add(t, a, commit("r1", 1, 10, append(append(req("c1", "make"), req("c2", "make")...),
		events.TicketIssued{ID: "t1", CallID: "c1"}, events.TicketIssued{ID: "t2", CallID: "c2"})...))
	rows := add(t, a, commit("r1", 1, 50,
		events.TicketResolved{Ticket: "t1", CallID: "c1", Reply: events.ReplyAlways, Approved: true, Principal: "ann"},
		events.ApprovalSaved{ID: "g1", Project: "p", Action: "bash", Resource: "make", Principal: "ann", Ticket: "t1"},
		events.TicketResolved{Ticket: "t2", CallID: "c2", Reply: events.ResolvedAuto, Approved: true, By: "t1", Principal: "ann"},
		events.ToolResultRecorded{CallID: "c2"}, events.ToolResultRecorded{CallID: "c1"}))
	if len(rows) != 2 || rows[0].Call != "c2" || rows[0].How != HowAuto || rows[0].By != "t1" || rows[0].Grant != "g1" || rows[0].DurationMs != 40 ||
		rows[1].Call != "c1" || rows[1].How != HowPerson || rows[1].Reply != "always" || rows[1].Principal != "ann" || rows[1].Grant != "" {
		t.Errorf("rows %+v", rows)
	}
	add(t, a, commit("r1", 2, 60, append(req("c3", "ls"), events.TicketIssued{ID: "t3", CallID: "c3"})...))
	rows = add(t, a, commit("r1", 2, 90, events.TicketResolved{Ticket: "t3", CallID: "c3", Reply: events.ResolvedExpired}, events.ToolResultRecorded{CallID: "c3"}))
	if len(rows) != 1 || rows[0].How != HowExpired || rows[0].Reply != events.ResolvedExpired || rows[0].Ticket != "t3" || rows[0].Open {
		t.Errorf("expired: %+v", rows)
	}
	add(t, a, commit("r1", 3, 100, req("c4", "a")...))
	add(t, a, commit("r1", 3, 100, req("c5", "b")...))
	rows = add(t, a, commit("r1", 3, 110, events.RunEnded{Cause: events.CauseCancelled}))
	if len(rows) != 2 || rows[0].Call != "c4" || rows[1].Call != "c5" || !rows[0].Open || !rows[1].Open {
		t.Errorf("open calls at the end: %+v", rows)
	}
	if len(a.runs) != 0 {
		t.Errorf("state kept after the run ended: %+v", a.runs)
	}
	add(t, a, commit("r2", 0, 120, events.RunStarted{Project: "p"}))
	add(t, a, commit("r2", 1, 120, req("c1", "x")...))
	if rows := a.Close(); len(rows) != 1 || rows[0].Run != "r2" || !rows[0].Open {
		t.Errorf("Close: %+v", rows)
	}
}

// A row is kept when its verdict is at or after Since and its run is of
// the project asked for.
func TestAuditFilter(t *testing.T) {
	for _, tt := range []struct {
		reason string
		f      AuditFilter
		want   int
	}{
		{"no filter", AuditFilter{}, 2},
		{"since the first verdict, exactly", AuditFilter{Since: t0.Add(10 * time.Millisecond)}, 2},
		{"since just after it", AuditFilter{Since: t0.Add(11 * time.Millisecond)}, 1},
		{"the project", AuditFilter{Project: "p"}, 2},
		{"another project", AuditFilter{Project: "q"}, 0},
	} {
		a := NewAuditor(tt.f)
		add(t, a, commit("r1", 0, 0, events.RunStarted{Project: "p"}))
		n := len(add(t, a, commit("r1", 1, 10, append(req("c1", "x"), events.ToolResultRecorded{CallID: "c1"})...)))
		n += len(add(t, a, commit("r1", 2, 20, append(req("c2", "x"), events.ToolResultRecorded{CallID: "c2"})...)))
		if n != tt.want {
			t.Errorf("%s: %d rows, want %d", tt.reason, n, tt.want)
		}
	}
}

// A run commit on another run's subject, and approvals for another
// project than their subject's or their run's, are skipped whole: they
// make no row and no grant.
func TestAuditSkipsForeignCommits(t *testing.T) {
	a := NewAuditor(AuditFilter{})
	add(t, a, commit("r1", 0, 0, events.RunStarted{Project: "p"}))
	m := commit("r1", 1, 10, append(req("c1", "x"), events.ToolResultRecorded{CallID: "c1"})...)
	if rows, err := a.Add(events.RunSubject("r2"), m.c); !errors.Is(err, ErrForeignCommit) || rows != nil {
		t.Errorf("a commit of r1 on r2's subject: %v, %v", rows, err)
	}
	saved := events.ApprovalSaved{ID: "g1", Project: "q", Action: "bash", Resource: "*"}
	if _, err := a.Add(events.RunSubject("r1"), commit("r1", 1, 10, saved).c); !errors.Is(err, ErrForeignCommit) {
		t.Errorf("run of p saving for q: %v", err)
	}
	if _, err := a.Add(events.GrantSubject("p"), &events.Commit{ID: "x", Kind: events.KindGrant, Events: []events.Event{saved}}); !errors.Is(err, ErrForeignCommit) {
		t.Errorf("grant subject of p saving for q: %v", err)
	}
	if _, err := a.Add(events.GrantSubject("q"), &events.Commit{ID: "y", Kind: events.KindGrant, Events: []events.Event{saved}}); err != nil {
		t.Errorf("grant subject of q saving for q: %v", err)
	}
	if len(a.grants) != 1 || a.grants["g1"] == nil {
		t.Errorf("grants %+v, want g1 alone", a.grants)
	}
}

// The auditor's state follows the open runs and their open calls, not the
// log: 200 runs of 20 steps each, interleaved, leave at most one open call
// per run while they run and nothing once they end; every call is a row.
func TestAuditStateFollowsOpenRuns(t *testing.T) {
	a := NewAuditor(AuditFilter{})
	const runs, steps = 200, 20
	id := func(i int) string { return "r" + strconv.Itoa(i) }
	for i := range runs {
		add(t, a, commit(id(i), 0, 0, events.RunStarted{Project: "p"}))
	}
	rows := 0
	for s := 1; s <= steps; s++ {
		for i := range runs {
			add(t, a, commit(id(i), s, s, req("c", "x")...))
			if n := len(a.runs[id(i)].calls); n != 1 {
				t.Fatalf("run %d step %d: %d open calls held", i, s, n)
			}
			rows += len(add(t, a, commit(id(i), s, s+1, events.ToolResultRecorded{CallID: "c"})))
		}
	}
	for i := range runs {
		rows += len(add(t, a, commit(id(i), steps, steps+2, events.RunEnded{Cause: events.CauseCompleted})))
	}
	if rows != runs*steps || len(a.runs) != 0 || len(a.Close()) != 0 {
		t.Errorf("%d rows (want %d), %d runs held after every run ended", rows, runs*steps, len(a.runs))
	}
}
