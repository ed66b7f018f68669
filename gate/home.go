package gate

import "strings"

// Home references.
//
// Users write rules about their home directory the way a shell taught them:
// external_directory: {"~/.ssh/*": deny}. A rule's resource pattern that
// starts with a home reference — "~" or "$HOME", alone or followed by '/'
// (or a backslash) — names a path under the home directory of the user the
// host runs as. The configuration expands it when it loads the rule (see
// [ExpandHome]), so the rule pinned for a run, the rule a verdict names and
// the rule a backtest reads are the absolute pattern, the same on every
// host that resumes the run.
//
// Only the start of a pattern is read: "~user", "${HOME}", "$HOMEDIR" and a
// "~" anywhere else stay literal. Patterns of the bash action are never
// expanded: a bash resource is the command's source text, where "~" is
// what the model wrote (bash expands it only when it runs), so
// bash: {"cat ~/.ssh/*": deny} matches `cat ~/.ssh/id_rsa` as written.

// HomeAction reports whether the resource patterns of rules on action are
// read for home references: every action but bash.
func HomeAction(action string) bool { return action != "bash" }

// HomeRef reports whether pattern starts with a home reference, and returns
// the rest of it after the reference ("" or a path starting with a
// separator).
func HomeRef(pattern string) (rest string, ok bool) {
	for _, ref := range [...]string{"~", "$HOME"} {
		if rest, ok := strings.CutPrefix(pattern, ref); ok && (rest == "" || rest[0] == '/' || rest[0] == '\\') {
			return rest, true
		}
	}
	return "", false
}

// ExpandHome returns pattern with its leading home reference (see
// [HomeRef]) replaced by home, an absolute path in '/' form: "~/.ssh/*"
// with home "/home/me" is "/home/me/.ssh/*", and "$HOME" alone is
// "/home/me". A pattern without one is returned as it is. A home that is
// empty or not absolute expands nothing and reports false, for the caller
// to refuse the rule: a deny rule left unexpanded would never match.
func ExpandHome(pattern, home string) (string, bool) {
	rest, ok := HomeRef(pattern)
	if !ok {
		return pattern, true
	}
	if home == "" || home[0] != '/' {
		return pattern, false
	}
	home = strings.TrimRight(home, "/")
	if home == "" && rest == "" {
		return "/", true // the home is the root
	}
	return home + rest, true
}
