package config

import (
	"slices"
	"testing"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/gate"
	"pgregory.net/rapid"
)

// propRoot is the location of the property's requests on paths.
const propRoot = "/loc"

// genPropRules draws an agent's rules from small alphabets, so that the
// user's and the project's often meet: the actions the built-in agent
// names, relative and absolute path patterns, commands.
func genPropRules(source gate.Source) *rapid.Generator[gate.Ruleset] {
	return rapid.Custom(func(t *rapid.T) gate.Ruleset {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		rs := make(gate.Ruleset, n)
		for i := range rs {
			rs[i] = gate.Rule{
				Action:   rapid.SampledFrom([]string{"*", "bash", "read", "edit", "external_directory", "re*"}).Draw(t, "action"),
				Resource: rapid.SampledFrom([]string{"*", "git *", "rm *", "*.env", "src/*", "/loc/src/*", "/etc/*", "/tmp/*", "a"}).Draw(t, "resource"),
				Effect:   rapid.SampledFrom([]gate.Effect{gate.Allow, gate.Ask, gate.Deny}).Draw(t, "effect"),
				Source:   source,
			}
		}
		return rs
	})
}

// genPropLayer draws a user or project layer: rules for build, or none
// (the agent left to the layers below), sometimes a ticket_ttl and
// tool_output bounds, and for the project sometimes an agent of its own.
func genPropLayer(t *rapid.T, label string, source gate.Source) *File {
	f := &File{Path: label + ".yaml", Agents: map[string]gate.Ruleset{}, source: source}
	if rapid.Bool().Draw(t, label+" defines build") {
		f.Agents["build"] = genPropRules(source).Draw(t, label+" build")
	}
	if rapid.Bool().Draw(t, label+" defines its own") {
		f.Agents["own"] = genPropRules(source).Draw(t, label+" own")
	}
	for _, a := range []string{"build", "own"} {
		if rapid.Bool().Draw(t, label+" ttl "+a) {
			if f.TicketTTL == nil {
				f.TicketTTL = map[string]time.Duration{}
			}
			f.TicketTTL[a] = time.Duration(rapid.IntRange(1, 5).Draw(t, label+" ttl")) * time.Hour
		}
	}
	f.MaxLines = rapid.SampledFrom([]int{0, 10, DefaultMaxLines, 10 * DefaultMaxLines}).Draw(t, label+" max_lines")
	f.MaxBytes = rapid.SampledFrom([]int{0, 10, DefaultMaxBytes, 10 * DefaultMaxBytes}).Draw(t, label+" max_bytes")
	return f
}

// genPropRequest draws a request: on paths in the location (both forms are
// judged) or on plain resources, with saved approvals sometimes.
func genPropRequest(t *rapid.T) (descriptor.Request, gate.Ruleset) {
	req := descriptor.Request{Action: rapid.SampledFrom([]string{"bash", "read", "edit", "external_directory", "webfetch"}).Draw(t, "request action")}
	if rapid.Bool().Draw(t, "paths") {
		req.Root = propRoot
		req.Resources = rapid.SliceOfN(rapid.SampledFrom([]string{"src/a.go", ".env", "a", ".git/config", "x/.stepgate/config.yaml"}), 0, 3).Draw(t, "paths")
	} else {
		req.Resources = rapid.SliceOfN(rapid.SampledFrom([]string{"git status", "rm -rf /", "make", "/etc/passwd", "/tmp/x", "a.env"}), 0, 3).Draw(t, "resources")
	}
	var saved gate.Ruleset
	for _, r := range genPropRules(gate.SourceSaved).Draw(t, "saved") {
		r.Effect = gate.Allow
		saved = append(saved, r)
	}
	return req, saved
}

// stricter reports whether the verdict a is at least as strict as b, in
// the order allow < ask < deny.
func atLeastAsStrict(a, b gate.Effect) bool {
	rank := map[gate.Effect]int{gate.Allow: 0, gate.Ask: 1, gate.Deny: 2}
	return rank[a] >= rank[b]
}

// A project layer never widens the user's verdict unless the user trusts
// it. For random user and project layers and random requests: the verdict
// with an untrusted project layer is never looser than without it (allow <
// ask < deny), nor its wait longer, nor its bounds larger, nor an agent
// defined that was not; and with trust, the project layer behaves as
// before: its rules follow the user's in one last-match-wins list, and the
// last layer's ticket_ttl and bounds hold.
func TestProjectLayerNeverWidens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		builtin := Builtin("/out")
		builtin.alwaysProtected = []string{"/home/me/.config/stepgate/config.yaml"}
		user := genPropLayer(t, "user", gate.SourceUser)
		project := genPropLayer(t, "project", gate.SourceProject)
		agent := rapid.SampledFrom([]string{"build", "own"}).Draw(t, "agent")
		req, saved := genPropRequest(t)

		without, okWithout := Resolve(agent, []*File{builtin, user})
		with, okWith := Resolve(agent, []*File{builtin, user, project})
		if okWith && !okWithout {
			t.Fatalf("an untrusted project defined agent %s: %v", agent, with.Rules)
		}
		v0 := gate.EvaluateInput(req, without.Rules, saved)
		v1 := gate.EvaluateInput(req, with.Rules, saved)
		if !atLeastAsStrict(v1.Effect, v0.Effect) {
			t.Fatalf("an untrusted project widened %+v: %s (%v) without it, %s (%v) with it\nrules: %v",
				req, v0.Effect, v0.Rule, v1.Effect, v1.Rule, with.Rules)
		}
		if without.TicketTTL > 0 && (with.TicketTTL == 0 || with.TicketTTL > without.TicketTTL) {
			t.Fatalf("an untrusted project lengthened the wait: %s without it, %s with it", without.TicketTTL, with.TicketTTL)
		}
		for _, b := range [][3]int{{without.MaxLines, with.MaxLines, DefaultMaxLines}, {without.MaxBytes, with.MaxBytes, DefaultMaxBytes}} {
			if cmpOr(b[1], b[2]) > cmpOr(b[0], b[2]) {
				t.Fatalf("an untrusted project raised a bound: %d without it, %d with it (0: %d)", b[0], b[1], b[2])
			}
		}
		if gate.WhollyDenied(req.Action, without.Rules) && !gate.WhollyDenied(req.Action, with.Rules) {
			t.Fatalf("an untrusted project showed %s, which the user's rules wholly deny", req.Action)
		}

		// Trusted: the layering of before — every layer's rules in one list.
		project.trusted = true
		trusted, okTrusted := Resolve(agent, []*File{builtin, user, project})
		var inline gate.Ruleset
		defined := false
		var ttl time.Duration
		lines, bytes := 0, 0
		for _, f := range []*File{builtin, user, project} {
			if rs, has := f.Agents[agent]; has {
				inline, defined = append(inline, rs...), true
			}
			if d, has := f.TicketTTL[agent]; has {
				ttl = d
			}
			lines, bytes = cmpOr(f.MaxLines, lines), cmpOr(f.MaxBytes, bytes)
		}
		if okTrusted != defined {
			t.Fatalf("trusted: agent %s defined %v, want %v", agent, okTrusted, defined)
		}
		if !defined {
			return
		}
		inline = append(inline, protectionRules(protections([]*File{builtin, user, project}))...)
		if !slices.Equal(trusted.Rules, inline) || trusted.TicketTTL != ttl || trusted.MaxLines != lines || trusted.MaxBytes != bytes {
			t.Fatalf("trusted: %v ttl %s bounds %d/%d, want the layers in one list %v ttl %s bounds %d/%d",
				trusted.Rules, trusted.TicketTTL, trusted.MaxLines, trusted.MaxBytes, inline, ttl, lines, bytes)
		}
	})
}

// cmpOr is v when it is set (positive), else prev.
func cmpOr(v, prev int) int {
	if v > 0 {
		return v
	}
	return prev
}
