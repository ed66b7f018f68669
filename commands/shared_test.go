package commands

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// waitingRun is a run as a host with many waiting runs holds them: the
// default-sized ruleset and a catalogue of a dozen tools, the same for
// every run started from one configuration.
func waitingRun(id string, rules []events.Rule, digest string) *projection.RunHeader {
	r := &projection.RunHeader{ID: id}
	r.Snapshot.Rules, r.Snapshot.PolicyDigest, r.Snapshot.Narrowing = rules, digest, "none"
	r.Catalog.Fingerprint = "fp"
	for i := range 12 {
		r.Catalog.Tools = append(r.Catalog.Tools, events.AdvertisedTool{Name: fmt.Sprintf("tool%d", i), Identity: fmt.Sprintf("builtin:tool%d@1", i)})
	}
	return r
}

func manyRules(n int, resource string) []events.Rule {
	out := make([]events.Rule, n)
	for i := range out {
		out[i] = events.Rule{Action: fmt.Sprintf("action%d", i), Resource: resource, Effect: "ask", Source: "config"}
	}
	return out
}

// Runs with the same rules and catalogue share their converted form: the
// configuration a host keeps per run costs a few hundred bytes, not a copy
// of the ruleset (3.5 KB a waiting run before, the largest part of it).
func TestRunsShareTheirConvertedRules(t *testing.T) {
	e := &base{}
	rules := manyRules(40, "**")
	const n = 2000
	runs := make([]*projection.RunHeader, n)
	for i := range runs {
		runs[i] = waitingRun(fmt.Sprintf("run%d", i), rules, "digest")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, r := range runs {
		e.config(r)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 600 {
		t.Errorf("each run's configuration costs %d B of heap, want ≤ 600 (the rules and catalogue shared)", per)
	}
	if a, b := e.config(runs[0]), e.config(runs[n-1]); a.converted != b.converted || a.tools != b.tools {
		t.Error("two runs with the same rules and catalogue hold separate converted copies")
	}
	runtime.KeepAlive(runs)
}

// The key is the rules themselves, never the digest a run's commit claims:
// a run whose snapshot names another run's policy digest but carries other
// rules is decided by its own rules.
func TestSharedRulesAreKeyedByContentNotByClaimedDigest(t *testing.T) {
	e := &base{}
	a := e.config(waitingRun("a", manyRules(3, "**"), "same"))
	b := e.config(waitingRun("b", manyRules(3, "secrets/*"), "same"))
	if a.converted == b.converted {
		t.Fatal("runs with one claimed digest and different rules share a ruleset")
	}
	if got := b.rules[0].Resource; got != "secrets/*" {
		t.Fatalf("run b decides with resource %q, want its own secrets/*", got)
	}
	// An append to one run's rules never writes into the shared array.
	c := e.config(waitingRun("c", manyRules(3, "**"), "other"))
	_ = append(c.rules, c.rules[0])
	_ = append(c.records, c.records[0])
	if len(a.converted.rules) != 3 || a.rules[0].Resource != "**" {
		t.Fatal("an append changed the shared rules")
	}
}

// A shared value lives as long as a run's configuration points to it: once
// the runs are forgotten (ended), the host holds none of their rules.
func TestSharedRulesGoWithTheirRuns(t *testing.T) {
	e := &base{}
	for i := range 50 {
		e.config(waitingRun(fmt.Sprintf("run%d", i), manyRules(5, fmt.Sprintf("dir%d/*", i)), "d"))
	}
	if got := e.shared.policies.len(); got != 50 {
		t.Fatalf("%d rulesets held for 50 runs with distinct rules, want 50", got)
	}
	for i := range 50 {
		e.forget(fmt.Sprintf("run%d", i))
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.shared.policies.len() > 0 || e.shared.catalogs.len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d rulesets and %d catalogues still held after their runs ended", e.shared.policies.len(), e.shared.catalogs.len())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
