package gate

import "strconv"

// Effect is what a rule does to a matching request.
type Effect string

// The effects a rule can have.
const (
	Allow Effect = "allow" // the call may run
	Deny  Effect = "deny"  // the call is blocked
	Ask   Effect = "ask"   // a human must confirm the call
)

// Valid reports whether e is one of [Allow], [Deny] and [Ask].
func (e Effect) Valid() bool {
	return e == Allow || e == Deny || e == Ask
}

// strictness orders effects deny > ask > allow. An invalid effect counts as
// deny, so a malformed rule fails closed.
func (e Effect) strictness() int {
	switch e {
	case Allow:
		return 0
	case Ask:
		return 1
	default:
		return 2
	}
}

// Source says where a rule came from, so a verdict can name it.
type Source string

// The sources of rules, lowest configuration layer first.
const (
	SourceDefault Source = "default" // the built-in agent defaults
	SourceUser    Source = "user"    // the user's configuration
	SourceProject Source = "project" // the project's .stepgate/config.yaml, as a layer (a trusted project's)
	// SourceProjectNarrowing marks a rule of a project file the user's file
	// does not trust: it may only narrow (see [Evaluate]).
	SourceProjectNarrowing Source = "project_narrowing"
	SourceSaved            Source = "saved" // an "always" approval saved for the project
	SourceRun              Source = "run"   // a per-run override
	// SourceProtected marks a protection, not an ordinary rule: a path no
	// rule, saved approval or agent default may allow to be written without
	// asking (see [MatchPath] and [EvaluateInput]).
	SourceProtected Source = "protected"
)

// Valid reports whether s is one of the Source constants.
func (s Source) Valid() bool {
	switch s {
	case SourceDefault, SourceUser, SourceProject, SourceProjectNarrowing, SourceSaved, SourceRun, SourceProtected:
		return true
	}
	return false
}

// Label returns the source as a person reads it, e.g. "project config".
// An unknown source is returned as it is, and the empty one as
// "unknown source".
func (s Source) Label() string {
	switch s {
	case SourceDefault:
		return "built-in default"
	case SourceUser:
		return "user config"
	case SourceProject:
		return "project config"
	case SourceProjectNarrowing:
		return "project config, narrows only"
	case SourceSaved:
		return "saved approval"
	case SourceRun:
		return "run override"
	case SourceProtected:
		return "protected path"
	case "":
		return "unknown source"
	}
	return string(s)
}

// Rule gives an effect to every request whose action matches the Action
// pattern and whose resource matches the Resource pattern (see [Match]).
type Rule struct {
	Action   string `json:"action"`
	Resource string `json:"resource"`
	Effect   Effect `json:"effect"`
	Source   Source `json:"source"`
	// TicketTTL, on an ask rule, bounds how long the confirmation it asks
	// for waits (a Go duration such as "15m"); empty: the run's default.
	TicketTTL string `json:"ticket_ttl,omitempty"`
}

// String renders the rule's patterns as the verdicts quote them:
// the action, then the resource pattern in quotes, as in bash "rm *".
func (r Rule) String() string {
	return r.Action + " " + strconv.Quote(r.Resource)
}

// Ruleset is an ordered list of rules; a later rule overrides an earlier one.
type Ruleset []Rule
