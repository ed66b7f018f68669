package config

import (
	"fmt"
	"strconv"

	"github.com/stepgate/stepgate/gate"
)

// Refusal is one thing a project layer that only narrows asked for and did
// not get: Asked as the file says it, Got what holds instead, and why.
type Refusal struct {
	Asked string `json:"asked"`
	Got   string `json:"got"`
}

// definesAgent reports whether f has rules for agent.
func (f *File) definesAgent(agent string) bool {
	_, has := f.Agents[agent]
	return has
}

// NotGranted lists what the project layer of layers asked for agent and did
// not get because it only narrows (see [Resolve]); nil when there is no
// such layer. It compares the layers resolved as they are with the same
// layers, the project's trusted:
//   - an agent only the project defines;
//   - a ticket_ttl, or a rule's, longer than the layers below give, and a
//     tool_output bound above theirs;
//   - each rule of the project's that would decide a request more loosely
//     than the layers do now, at the requests the rules' own patterns name
//     (each rule's action and resource, read as a request): a project's
//     "*": allow under the built-in agent shows external_directory "*"
//     and read "*.env" still asking.
func NotGranted(agent string, layers []*File) []Refusal {
	if len(layers) == 0 || !layers[len(layers)-1].narrows() {
		return nil
	}
	p := layers[len(layers)-1]
	asked, _ := Resolve(agent, append(layers[:len(layers)-1:len(layers)-1], p.TrustProject()))
	got, ok := Resolve(agent, layers)
	if !ok {
		if p.definesAgent(agent) {
			return []Refusal{{Asked: "agents." + agent, Got: "denied everything: only the project defines it, and a project that is not in trusted_projects may only narrow an agent another layer defines"}}
		}
		return nil
	}
	var out []Refusal
	if asked.TicketTTL != got.TicketTTL {
		out = append(out, Refusal{Asked: fmt.Sprintf("agents.%s.ticket_ttl %s", agent, asked.TicketTTL), Got: fmt.Sprintf("ticket_ttl %s: a project may only shorten the wait", got.TicketTTL)})
	}
	for _, b := range []struct {
		key       string
		asked, at int
	}{{"max_lines", asked.MaxLines, got.MaxLines}, {"max_bytes", asked.MaxBytes, got.MaxBytes}} {
		if b.asked != b.at {
			out = append(out, Refusal{Asked: fmt.Sprintf("tool_output.%s %d", b.key, b.asked), Got: fmt.Sprintf("%s %d: a project may only lower the bound", b.key, b.at)})
		}
	}
	below, _ := Resolve(agent, layers[:len(layers)-1])
	for i, r := range got.Rules {
		if r.Source == gate.SourceProjectNarrowing && asked.Rules[i].TicketTTL != r.TicketTTL {
			out = append(out, Refusal{Asked: ruleText(asked.Rules[i]), Got: fmt.Sprintf("ticket_ttl dropped: longer than the agent's %s in the layers below", below.TicketTTL)})
		}
	}
	return append(out, looserRules(asked.Rules, got.Rules)...)
}

// maxWitnesses bounds the requests [NotGranted] tries (each one decided
// against every rule, twice), so that a project file of many rules cannot
// make config check run for long.
const maxWitnesses = 1024

// looserRules are the project rules of asked (the project trusted) that
// decide a request more loosely than got (the project narrowing) does, at
// the requests the rules' own patterns name, each request once, at most
// maxWitnesses of them (a last refusal says when more were not tried).
func looserRules(asked, got gate.Ruleset) []Refusal {
	var out []Refusal
	seen := map[[2]string]bool{}
	for _, w := range asked {
		key := [2]string{w.Action, w.Resource}
		if w.Source == gate.SourceProtected || seen[key] {
			continue
		}
		if len(seen) == maxWitnesses {
			return append(out, Refusal{Asked: "more rules", Got: fmt.Sprintf("not compared: config check tries the first %d requests the rules name", maxWitnesses)})
		}
		seen[key] = true
		a, g := gate.Evaluate(w.Action, w.Resource, asked), gate.Evaluate(w.Action, w.Resource, got)
		if a.Rule == nil || a.Rule.Source != gate.SourceProject || a.Effect == g.Effect || a.Effect == gate.Deny {
			continue
		}
		verb := map[gate.Effect]string{gate.Allow: "is allowed", gate.Ask: "asks", gate.Deny: "is denied"}[g.Effect]
		by := ": no rule matches"
		if g.Rule != nil {
			by = fmt.Sprintf(" by rule %s (%s)", g.Rule, g.Rule.Source.Label())
		}
		out = append(out, Refusal{Asked: ruleText(*a.Rule), Got: fmt.Sprintf("%s %s %s%s", w.Action, strconv.Quote(w.Resource), verb, by)})
	}
	return out
}

// ruleText is a rule as config check prints it: effect, action and
// resource, and its ticket_ttl.
func ruleText(r gate.Rule) string {
	s := fmt.Sprintf("%s %s", r.Effect, r)
	if r.TicketTTL != "" {
		s += " ticket_ttl " + r.TicketTTL
	}
	return s
}

// Check is [Loader.Effective] with NotGranted filled: what `engine config
// check` prints.
func (l Loader) Check(agent, location string) (Effective, error) {
	layers, err := l.Layers(location)
	if err != nil {
		return Effective{Agent: agent, Rules: gate.DenyAllRules(gate.SourceDefault)}, err
	}
	e, err := effective(agent, layers)
	e.NotGranted = NotGranted(agent, layers)
	return e, err
}
