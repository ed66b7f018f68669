package gate

import "strings"

// Narrows reports whether pattern p is narrower than or equal to pattern s:
// every resource p matches, s matches too, so a saved approval of p allows
// nothing one of s would not. It is how an operator's narrowed "always"
// pattern is checked against the ticket's save pattern.
//
// p is accepted in three forms only, which is what "narrower" means here:
//   - s itself;
//   - a literal (no '*' or '?') that s matches;
//   - a literal followed by a run of '*' (such as "src/api/*" or
//     "git status *"), when s ends in a '*' and matches the literal without
//     the optional-tail rule of [Match] (so every continuation of the
//     literal matches s too), and, when p ends in a space and '*', s
//     matches the literal without that space as well (p matches it).
//
// Any other p, wildcards inside it included, is not narrower, even where
// it might be: the check stays one an operator can follow.
func Narrows(p, s string) bool {
	if p == s {
		return true
	}
	literal := strings.TrimRight(p, "*")
	if strings.ContainsAny(literal, "*?") {
		return false
	}
	if literal == p {
		return Match(s, literal)
	}
	if !strings.HasSuffix(s, "*") {
		return false
	}
	if ok, _ := match(s, literal); !ok {
		return false
	}
	if head, ok := optionalTail(p); ok && !Match(s, head) {
		return false
	}
	return true
}
