package replay

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection/fold"
	"pgregory.net/rapid"
)

// Generators: small alphabets, so that patterns often match.

func genRule() *rapid.Generator[gate.Rule] {
	return rapid.Custom(func(t *rapid.T) gate.Rule {
		r := gate.Rule{
			Action:   rapid.SampledFrom([]string{"*", "read", "bash", "re*", "edit"}).Draw(t, "action"),
			Resource: rapid.StringOfN(rapid.RuneFrom([]rune("ab*")), 0, 3, -1).Draw(t, "resource"),
			Effect:   rapid.SampledFrom([]gate.Effect{gate.Allow, gate.Deny, gate.Ask}).Draw(t, "effect"),
			Source:   rapid.SampledFrom([]gate.Source{gate.SourceDefault, gate.SourceUser, gate.SourceProject, gate.SourceRun, gate.SourceProtected}).Draw(t, "source"),
		}
		if r.Source == gate.SourceProtected {
			r.Action, r.Effect = "edit", gate.Ask
		}
		return r
	})
}

func genRequest() *rapid.Generator[descriptor.Request] {
	return rapid.Custom(func(t *rapid.T) descriptor.Request {
		res := rapid.SliceOfN(rapid.StringOfN(rapid.RuneFrom([]rune("ab")), 0, 3, -1), 0, 3).Draw(t, "resources")
		r := descriptor.Request{Action: rapid.SampledFrom([]string{"read", "bash", "edit"}).Draw(t, "action"), Resources: res,
			Ask: rapid.Bool().Draw(t, "ask")}
		if rapid.Bool().Draw(t, "save") {
			r.Save = res
		}
		return r
	})
}

func eventRules(rs gate.Ruleset) []events.Rule {
	out := make([]events.Rule, len(rs))
	for i := range rs {
		out[i] = *recordOf(&rs[i])
	}
	return out
}

func eventRequests(rs []descriptor.Request) []events.Request {
	var out []events.Request
	for _, r := range rs {
		out = append(out, events.Request{Action: r.Action, Resources: r.Resources, Save: r.Save, Ask: r.Ask})
	}
	return out
}

// recorded is the verdict as the engine records it (commands/decide.go): the
// call's requests, or for a confirm the parts that asked.
func recorded(callID string, v gate.Verdict, reqs []descriptor.Request) events.PermissionDecided {
	pd := events.PermissionDecided{CallID: callID, Verdict: string(v.Kind), Reason: v.Reason, Rule: recordOf(v.Rule), Requests: eventRequests(reqs)}
	if v.Kind == gate.KindConfirm {
		pd.Requests = eventRequests(v.Asked)
	}
	return pd
}

// genHistory draws a run's stream: its start, then decide commits (each
// call decided by the pinned rules against the grants folded so far, as the
// engine does) interleaved with grants saved and revoked.
func genHistory(t *rapid.T) (pinned gate.Ruleset, commits []*events.Commit) {
	pinned = rapid.SliceOfN(genRule(), 0, 6).Draw(t, "pinned")
	narrowing := rapid.SampledFrom([]string{"configured", "configured", "deny_all"}).Draw(t, "narrowing")
	var n gate.Narrowing
	_ = n.UnmarshalText([]byte(narrowing))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(kind events.Kind, step int, evs ...events.Event) {
		at = at.Add(time.Second)
		run := "R"
		if kind == events.KindGrant {
			run = ""
		}
		commits = append(commits, &events.Commit{ID: fmt.Sprint(len(commits)), Run: run, Step: step, Kind: kind, At: at, Events: evs})
	}
	commit(events.KindStart, 0, events.RunStarted{Agent: "build", Project: "p", Rules: eventRules(pinned), Narrowing: narrowing})
	grants := fold.Grants{}
	var ids []string
	step := 0
	for i := range rapid.IntRange(1, 12).Draw(t, "commits") {
		switch rapid.IntRange(0, 3).Draw(t, "what") {
		case 0:
			id := fmt.Sprintf("g%03d", i)
			e := events.ApprovalSaved{ID: id, Project: "p", Action: rapid.SampledFrom([]string{"read", "bash", "edit"}).Draw(t, "ga"),
				Resource: rapid.StringOfN(rapid.RuneFrom([]rune("ab*")), 1, 3, -1).Draw(t, "gr")}
			grants.Apply(e)
			ids = append(ids, id)
			commit(events.KindGrant, 0, e)
		case 1:
			if len(ids) == 0 {
				continue
			}
			e := events.GrantRevoked{ID: rapid.SampledFrom(ids).Draw(t, "revoke"), Project: "p"}
			grants.Apply(e)
			commit(events.KindGrant, 0, e)
		default:
			var saved gate.Ruleset
			for _, g := range grants.Active("p") {
				saved = append(saved, gate.Rule{Action: g.Action, Resource: g.Resource, Effect: gate.Allow, Source: gate.SourceSaved})
			}
			step++
			var evs []events.Event
			for c := range rapid.IntRange(1, 3).Draw(t, "calls") {
				id := fmt.Sprintf("s%dc%d", step, c)
				reqs := rapid.SliceOfN(genRequest(), 0, 3).Draw(t, "requests")
				if n != gate.Configured {
					reqs = nil // the engine records none: the run's tools are disabled
				}
				evs = append(evs, events.ToolCallRequested{CallID: id, Tool: "t"}, recorded(id, gate.Decide(n, reqs, pinned, saved), reqs))
			}
			commit(events.KindDecide, step, evs...)
		}
	}
	return pinned, commits
}

func backtest(commits []*events.Commit, resolve Resolver) ([]Change, Summary) {
	b := NewBacktest(resolve, Filter{})
	var out []Change
	for i, c := range commits {
		b.Apply(uint64(i+1), c, func(ch Change) { out = append(out, ch) })
	}
	return out, b.Summary()
}

// The candidate equal to the pinned rules changes nothing, over generated
// rules, requests and grants saved and revoked between the calls: every
// call is re-decided with the grants as they stood when it was decided.
// Every call is re-decided, confirms included: the rules being the run's
// own, the parts of a confirm the commit leaves out were allowed.
func TestBacktestPinnedChangesNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pinned, commits := genHistory(t)
		changes, sum := backtest(commits, func(events.RunStarted) gate.Ruleset { return pinned })
		if len(changes) != 0 {
			t.Fatalf("the pinned rules change %d verdicts: %+v", len(changes), changes[0])
		}
		if len(sum.NotRedecidable) != 0 {
			t.Fatalf("not re-decidable: %v", sum.NotRedecidable)
		}
	})
}

// Adding a deny rule never loosens: every change is to a block, so no block
// turns into an allow or a confirm, and no allow into a confirm.
func TestBacktestAddedDenyOnlyBlocks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pinned, commits := genHistory(t)
		deny := genRule().Draw(t, "deny")
		if deny.Source == gate.SourceProtected {
			deny.Source = gate.SourceProject
		}
		deny.Effect = gate.Deny
		cand := append(slices.Clip(pinned), deny)
		changes, _ := backtest(commits, func(events.RunStarted) gate.Ruleset { return cand })
		for _, c := range changes {
			if c.New.Verdict != string(gate.KindBlock) || c.Old.Verdict == string(gate.KindBlock) {
				t.Fatalf("adding %v: %s", deny, c.Kind())
			}
		}
	})
}
