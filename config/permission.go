package config

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// permission is agents.NAME.permission: the shorthand mapping
// (action: effect, or action: {resource: effect}) or the explicit list of
// rules, in file order.
type permission struct {
	rules gate.Ruleset
	set   bool
}

func (p *permission) decode(s state, n ast.Node) error {
	p.set = true
	if seq, ok := n.(*ast.SequenceNode); ok {
		for i, item := range seq.Values {
			r, err := listRule(s.index(i), item)
			if err != nil {
				return err
			}
			p.rules = append(p.rules, r)
		}
		return nil
	}
	return entries(s, n, func(action string, kn, vn ast.Node) error {
		as := s.child(action, kn)
		if text, ok := scalar(vn); ok {
			return p.add(as, vn, action, "*", text)
		}
		return entries(as, vn, func(resource string, rkn, rvn ast.Node) error {
			text, _ := scalar(rvn)
			return p.add(as.child(resource, rkn), rvn, action, resource, text)
		})
	})
}

// add appends the rule for action on resource with the effect written at n,
// a leading "~" or "$HOME" of the resource expanded (see resourcePattern).
func (p *permission) add(s state, n ast.Node, action, resource, effect string) error {
	e, err := parseEffect(s, n, effect)
	if err != nil {
		return err
	}
	if resource, err = resourcePattern(s, n, action, resource); err != nil {
		return err
	}
	p.rules = append(p.rules, gate.Rule{Action: action, Resource: resource, Effect: e, Source: s.source})
	return nil
}

// rule is agents.NAME.permission[i]: one rule of the list form.
type rule struct {
	// The permission the rule is about: a tool's action (read, edit, bash,
	// external_directory, …) or "*".
	Action plain `yaml:"action"`
	// The pattern of what the action is on: a path, a command, "*".
	Resource plain `yaml:"resource"`
	// allow, ask or deny.
	Effect plain `yaml:"effect"`
	// For an ask rule: how long its confirmations wait.
	TicketTTL plain `yaml:"ticket_ttl"`
}

func (r *rule) decode(s state, n ast.Node) error { return fields(s, n, r, "unknown key") }

// listRule decodes an item of the list form; an action is required and the
// resource defaults to "*".
func listRule(s state, n ast.Node) (gate.Rule, error) {
	var r rule
	if err := r.decode(s, n); err != nil {
		return gate.Rule{}, err
	}
	out := gate.Rule{Action: r.Action.text, Resource: "*", TicketTTL: r.TicketTTL.text, Source: s.source}
	if out.Action == "" {
		return out, s.child("action", nil).fail(n, "an action is required")
	}
	if r.Resource.set {
		res, err := resourcePattern(s.child("resource", nil), n, out.Action, r.Resource.text)
		if err != nil {
			return out, err
		}
		out.Resource = res
	}
	e, err := parseEffect(s.child("effect", nil), n, r.Effect.text)
	out.Effect = e
	return out, err
}

// parseEffect is the effect written at n.
func parseEffect(s state, n ast.Node, text string) (gate.Effect, error) {
	e := gate.Effect(text)
	if !e.Valid() {
		return "", s.fail(n, "effect %q: want allow, deny or ask", text)
	}
	return e, nil
}
