package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// WhollyDenied reports whether rs denies action on every resource, judged by
// the last rule whose action pattern matches action: it must deny and have a
// resource pattern made only of '*'. The narrowing rules are judged apart
// (see [Evaluate]): the last of them whose action pattern matches action
// wholly denies it too. A tool whose action is wholly denied is left out of
// the catalogue the model sees. An action no rule names is not wholly denied
// (it asks). Protections are no rules here: they only ask.
func WhollyDenied(action string, rs Ruleset) bool {
	var o, n *Rule
	for i := len(rs) - 1; i >= 0 && (o == nil || n == nil); i-- {
		r := &rs[i]
		if r.Source == SourceProtected || !Match(r.Action, action) {
			continue
		}
		switch {
		case r.Source == SourceProjectNarrowing && n == nil:
			n = r
		case r.Source != SourceProjectNarrowing && o == nil:
			o = r
		}
	}
	return wholly(o) || wholly(n)
}

// wholly reports whether r denies every resource.
func wholly(r *Rule) bool { return r != nil && r.Effect == Deny && onlyStars(r.Resource) }

// onlyStars reports whether the pattern p is one or more '*', matching
// every string.
func onlyStars(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '*' {
			return false
		}
	}
	return p != ""
}

// DenyAllRules returns the ruleset that denies everything, attributed to
// source. It stands in for an agent whose rules cannot be resolved: such an
// agent is denied everything, never asked and never allowed.
func DenyAllRules(source Source) Ruleset {
	return Ruleset{{Action: "*", Resource: "*", Effect: Deny, Source: source}}
}

// Digest returns the policy digest of rs: the lowercase hex SHA-256 of the
// rules' JSON, a list of objects with the keys action, resource, effect and
// source in that order. Nil and empty rulesets have the same digest (that
// of "[]"), and so does every pair of rulesets with equal rules in equal order.
func (rs Ruleset) Digest() string {
	if rs == nil {
		rs = Ruleset{}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		// Unreachable: a Ruleset holds only strings, which always encode.
		panic("gate: encode ruleset: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
