// Package vocab converts between the log's vocabulary (package events) and
// the gate's (packages gate and descriptor). The log keeps copies of its
// own of rules and requests so that it depends on nothing; the engine
// (commands) and the readers of the past (replay) convert through here, the
// one place that knows both.
package vocab

import (
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// Rule is the gate's form of a recorded rule.
func Rule(r events.Rule) gate.Rule {
	return gate.Rule{Action: r.Action, Resource: r.Resource, Effect: gate.Effect(r.Effect), Source: gate.Source(r.Source), TicketTTL: r.TicketTTL}
}

// EventRule is the log's form of a rule.
func EventRule(r gate.Rule) events.Rule {
	return events.Rule{Action: r.Action, Resource: r.Resource, Effect: string(r.Effect), Source: string(r.Source), TicketTTL: r.TicketTTL}
}

// Rules is the gate's form of recorded rules, in order.
func Rules(rs []events.Rule) gate.Ruleset {
	out := make(gate.Ruleset, len(rs))
	for i, r := range rs {
		out[i] = Rule(r)
	}
	return out
}

// EventRules is the log's form of a ruleset, in order.
func EventRules(rs gate.Ruleset) []events.Rule {
	out := make([]events.Rule, len(rs))
	for i, r := range rs {
		out[i] = EventRule(r)
	}
	return out
}

// Requests is the gate's form of recorded permission requests (nil for
// none).
func Requests(rs []events.Request) []descriptor.Request {
	if len(rs) == 0 {
		return nil
	}
	out := make([]descriptor.Request, len(rs))
	for i, r := range rs {
		out[i] = descriptor.Request{Action: r.Action, Resources: r.Resources, Save: r.Save, Ask: r.Ask, Root: r.Root}
	}
	return out
}

// EventRequests is the log's form of permission requests (nil for none).
func EventRequests(rs []descriptor.Request) []events.Request {
	if len(rs) == 0 {
		return nil
	}
	out := make([]events.Request, len(rs))
	for i, r := range rs {
		out[i] = events.Request{Action: r.Action, Resources: r.Resources, Save: r.Save, Ask: r.Ask, Root: r.Root}
	}
	return out
}
