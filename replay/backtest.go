package replay

import (
	"maps"
	"slices"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
	"github.com/stepgate/stepgate/projection/fold"
)

// Why a recorded call could not be re-decided (see [Summary]).
const (
	// NoStart: the run's RunStarted is not in the log read, so its pinned
	// snapshot is unknown.
	NoStart = "the run's start is not in the log"
	// NoRequests: the verdict was recorded without the permission requests
	// the call raised (a commit older than requests in verdicts).
	NoRequests = "no permission requests recorded"
	// PartialRequests: a confirm records only the parts of the call that
	// asked, not those the rules allowed, so under rules other than the
	// run's own only a block is certain.
	PartialRequests = "a confirm records only the parts that asked"
	// UnknownVerdict: a verdict kind this build does not know.
	UnknownVerdict = "unknown recorded verdict"
)

// Filter selects the calls a backtest re-decides; the zero value selects
// every call. Grants are folded from every commit whatever the filter.
type Filter struct {
	Run     string    // only this run; "" for any
	Project string    // only runs of this project; "" for any
	Since   time.Time // only calls decided at or after; zero for any
}

// Decision is one verdict on a call as the backtest reports it.
type Decision struct {
	Verdict string       `json:"verdict"`
	Reason  string       `json:"reason,omitempty"`
	Rule    *events.Rule `json:"rule,omitempty"`
}

// Change is a recorded call whose verdict differs under the candidate.
type Change struct {
	Seq     uint64    `json:"seq"`
	At      time.Time `json:"at"`
	Run     string    `json:"run"`
	Project string    `json:"project"`
	Step    int       `json:"step"`
	CallID  string    `json:"call_id"`
	Tool    string    `json:"tool,omitempty"`
	Old     Decision  `json:"old"`
	New     Decision  `json:"new"`
	// Sandbox is set for a call whose sandbox profile would change (see
	// [Backtest.WithSandbox]); Old and New are then its verdicts, which may
	// be the same.
	Sandbox *SandboxChange `json:"sandbox,omitempty"`
}

// Kind names the change as the summary counts it, e.g. "allow→block", or
// "sandbox looser" for a change of sandbox profile.
func (c Change) Kind() string {
	if c.Sandbox != nil {
		return "sandbox " + c.Sandbox.Direction
	}
	return c.Old.Verdict + "→" + c.New.Verdict
}

// Summary counts what a backtest saw.
type Summary struct {
	// Redecided is how many calls were re-decided, Runs in how many runs.
	Redecided int `json:"redecided"`
	Runs      int `json:"runs"`
	// Changed counts the changes by kind ("allow→block": 2, "sandbox
	// looser": 1).
	Changed map[string]int `json:"changed"`
	// Refused counts calls refused before the gate (unknown tool, invalid
	// input): they had no permission decision to re-decide.
	Refused int `json:"refused_before_gate"`
	// NotRedecidable counts the calls that could not be re-decided, by why.
	NotRedecidable map[string]int `json:"not_redecidable"`
	// Unreadable counts messages of the log that are not commits.
	Unreadable int `json:"unreadable"`
}

// Changes is the total of Changed.
func (s Summary) Changes() int {
	n := 0
	for _, c := range s.Changed {
		n += c
	}
	return n
}

// Backtest re-decides recorded calls, one commit at a time in stream order.
// Its memory is the open runs it selected (their pinned rules resolved
// against the candidate) and the saved approvals, never the log.
type Backtest struct {
	resolve Resolver
	sandbox SandboxResolver // nil: profiles are not compared
	filter  Filter
	grants  fold.Grants
	saved   map[string]gate.Ruleset // per project, from grants; cleared when they change
	runs    map[string]*runState
	touched map[string]bool
	sum     Summary
}

// runState is what re-deciding a run's calls needs.
type runState struct {
	project   string
	narrowing gate.Narrowing
	rules     gate.Ruleset
	// own: rules are the pinned ones, rule for rule (the gate is pure: a
	// confirm decided by them again is a confirm).
	own bool
	// sandbox is what comparing its calls' profiles needs; nil when they
	// are not compared.
	sandbox *sandboxState
}

// NewBacktest returns a backtest against the rulesets resolve gives.
func NewBacktest(resolve Resolver, f Filter) *Backtest {
	return &Backtest{resolve: resolve, filter: f, grants: fold.Grants{}, saved: map[string]gate.Ruleset{},
		runs: map[string]*runState{}, touched: map[string]bool{},
		sum: Summary{Changed: map[string]int{}, NotRedecidable: map[string]int{}}}
}

// Unreadable notes a message of the log that is not a commit.
func (b *Backtest) Unreadable() { b.sum.Unreadable++ }

// Summary returns the counts so far.
func (b *Backtest) Summary() Summary {
	s := b.sum
	s.Changed, s.NotRedecidable = maps.Clone(s.Changed), maps.Clone(s.NotRedecidable)
	s.Runs = len(b.touched)
	return s
}

// Apply re-decides the calls commit c (at stream sequence seq) decided and
// calls emit with each verdict that changes; then it folds c's saved
// approvals, so a call is decided with the grants the engine saw.
func (b *Backtest) Apply(seq uint64, c *events.Commit, emit func(Change)) {
	b.start(c)
	if b.selected(c) && (c.Kind == events.KindDecide || c.Kind == events.KindStep) {
		b.decideAll(seq, c, emit)
	}
	for _, e := range c.Events {
		if b.grants.Apply(e) != "" {
			clear(b.saved)
		}
	}
	if st := b.runs[c.Run]; st != nil && st.sandbox != nil {
		for _, e := range c.Events {
			if r, ok := e.(events.ToolResultRecorded); ok {
				b.resulted(seq, c, st, r, emit)
			}
		}
	}
	if c.Run != "" && slices.ContainsFunc(c.Events, func(e events.Event) bool { return e.EventType() == events.TypeRunEnded }) {
		delete(b.runs, c.Run)
	}
}

// start takes in the pinned snapshot of a selected run.
func (b *Backtest) start(c *events.Commit) {
	if c.Run == "" || (b.filter.Run != "" && c.Run != b.filter.Run) {
		return
	}
	for _, e := range c.Events {
		rs, ok := e.(events.RunStarted)
		if !ok || (b.filter.Project != "" && rs.Project != b.filter.Project) {
			continue
		}
		n := gate.DenyAll // a snapshot this build cannot read never widens authority
		var nw gate.Narrowing
		if err := nw.UnmarshalText([]byte(rs.Narrowing)); err == nil {
			n = nw
		}
		rules := b.resolve(rs)
		st := &runState{project: rs.Project, narrowing: n, rules: rules, own: slices.Equal(rules, vocab.Rules(rs.Rules))}
		b.startSandbox(st, rs)
		b.runs[c.Run] = st
	}
}

// selected reports whether the filter takes c's calls.
func (b *Backtest) selected(c *events.Commit) bool {
	switch {
	case c.Run == "", b.filter.Run != "" && c.Run != b.filter.Run, !b.filter.Since.IsZero() && c.At.Before(b.filter.Since):
		return false
	case b.filter.Project != "":
		st := b.runs[c.Run]
		return st != nil && st.project == b.filter.Project
	}
	return true
}

// decideAll re-decides each first permission decision in c.
func (b *Backtest) decideAll(seq uint64, c *events.Commit, emit func(Change)) {
	st := b.runs[c.Run]
	tools := map[string]string{}
	for _, e := range c.Events {
		switch e := e.(type) {
		case events.ToolCallRequested:
			tools[e.CallID] = e.Tool
		case events.PermissionDecided:
			if e.Verdict == events.VerdictReject {
				b.sum.Refused++
				continue
			}
			if st == nil {
				b.sum.NotRedecidable[NoStart]++
				continue
			}
			old := Decision{Verdict: e.Verdict, Reason: e.Reason, Rule: e.Rule}
			nv, why := b.redecide(st, e)
			if why != "" {
				b.sum.NotRedecidable[why]++
				st.awaitResult(c.Step, e.CallID, tools[e.CallID], old, old) // its profile is compared all the same
				continue
			}
			b.sum.Redecided++
			b.touched[c.Run] = true
			st.awaitResult(c.Step, e.CallID, tools[e.CallID], old, nv)
			if nv.Verdict != e.Verdict {
				ch := Change{Seq: seq, At: c.At, Run: c.Run, Project: st.project, Step: c.Step, CallID: e.CallID, Tool: tools[e.CallID],
					Old: old, New: nv}
				b.sum.Changed[ch.Kind()]++
				emit(ch)
			}
		}
	}
}

// redecide gives the candidate's verdict on the call pd recorded, or why it
// cannot be given.
func (b *Backtest) redecide(st *runState, pd events.PermissionDecided) (Decision, string) {
	reqs := vocab.Requests(pd.Requests)
	switch pd.Verdict {
	case events.VerdictAllow, events.VerdictBlock, events.VerdictConfirm:
	default:
		return Decision{}, UnknownVerdict
	}
	if len(reqs) == 0 && !noRequestsNeeded(pd) {
		return Decision{}, NoRequests
	}
	v := gate.Decide(st.narrowing, reqs, st.rules, b.savedFor(st.project))
	if pd.Verdict == events.VerdictConfirm && v.Kind != gate.KindBlock && (!st.own || v.Kind != gate.KindConfirm) {
		return Decision{}, PartialRequests
	}
	return Decision{Verdict: string(v.Kind), Reason: v.Reason, Rule: recordOf(v.Rule)}, ""
}

// noRequestsNeeded reports whether pd's verdict is one the gate gives with
// no request at all: a call that needs no permission, or a run whose tools
// are disabled.
func noRequestsNeeded(pd events.PermissionDecided) bool {
	return pd.Verdict == events.VerdictAllow && pd.Reason == "no permission required" ||
		pd.Verdict == events.VerdictBlock && pd.Reason == gate.DisabledReason
}

// savedFor is the project's saved approvals in force, as allow rules.
func (b *Backtest) savedFor(project string) gate.Ruleset {
	if rs, ok := b.saved[project]; ok {
		return rs
	}
	var rs gate.Ruleset
	for _, g := range b.grants.Active(project) {
		rs = append(rs, gate.Rule{Action: g.Action, Resource: g.Resource, Effect: gate.Allow, Source: gate.SourceSaved})
	}
	b.saved[project] = rs
	return rs
}
