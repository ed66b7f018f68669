package gate

import "strings"

// Path resources in two forms.
//
// A tool names a path inside the run's location by its location-relative
// form ("secrets/key.md"); a user may write a rule for it either way:
// edit: {"secrets/**": deny} or edit: {"/home/me/proj/secrets/**": deny}.
// A request whose Root is set (see descriptor.Request) names paths, and each
// of its relative resources is decided in both forms:
//   - the relative form by every rule, as any resource;
//   - the absolute form, Root/resource, by the rules whose resource pattern
//     is absolute (starts with '/'; see [AbsolutePattern]). A pattern that
//     is not, such as "*" or "*.env", is a rule about relative paths and is
//     not asked again about the absolute form: were it, a catch-all
//     "*": ask after "src/*": allow would ask for every path.
//
// Each form is decided last-match-wins among the rules that judge it; when
// both are, the stricter decision holds (deny, then ask, then allow), and
// when one is, its decision holds. So a deny written with the absolute path
// denies whatever relative rule comes after it, and no form can loosen what
// the other decided. A saved approval that matches either form allows, as
// saved approvals do, unless the configured rules deny either form.
//
// One exception, so that an absolute allow means what it says: the relative
// form abstains when the rule that decides it is a rule about any path, not
// about this form — its pattern matches the absolute form too, as "*" or
// "*.go" do — and it does not deny, and an absolute rule judging the
// absolute form comes after it. The relative form then matched nothing but
// a default, and edit: {"*": ask, "/home/me/proj/src/*": allow} allows
// src/a.go, as last-match-wins says. A deny in either form still denies.

// AbsolutePattern reports whether a rule's resource pattern is written as an
// absolute path: it starts with '/' (or a backslash, read as '/').
func AbsolutePattern(pattern string) bool {
	return pattern != "" && (pattern[0] == '/' || pattern[0] == '\\')
}

// absForm is the absolute form of resource res of a request with root root
// ("." is root itself), or "" when it has none: the request names no paths,
// or res is absolute already.
func absForm(root, res string) string {
	if root == "" || res == "" || AbsolutePattern(res) {
		return ""
	}
	if res == "." {
		return root
	}
	return strings.TrimRight(root, "/") + "/" + res
}

// decideForms is the decision of rs on res, a path resource whose absolute
// form is abs ("" for none), and whether a rule judged either form. The
// decision names res as the resource, and the rule of the form that held.
func (rs Ruleset) decideForms(action, res, abs string) (Decision, bool) {
	d, ok := rs.decide(action, res)
	if abs == "" {
		return d, ok
	}
	ad, aok := rs.decideIn(action, abs, true)
	if aok && ok && rs.abstains(d, ad, abs) {
		ad.Resource = res
		return ad, true
	}
	if !aok || ok && ad.Effect.strictness() <= d.Effect.strictness() {
		return d, ok
	}
	ad.Resource = res
	return ad, true
}

// abstains reports whether the relative form's decision d gives way to the
// absolute form's, ad, on abs (see above): d's rule does not deny, matches
// abs as well, and comes before ad's rule in rs.
func (rs Ruleset) abstains(d, ad Decision, abs string) bool {
	if d.Effect == Deny || !Match(d.Rule.Resource, abs) {
		return false
	}
	return rs.index(d.Rule) < rs.index(ad.Rule)
}

// index is the place in rs of r, a rule of rs (-1 for one that is not).
func (rs Ruleset) index(r *Rule) int {
	for i := range rs {
		if &rs[i] == r {
			return i
		}
	}
	return -1
}
