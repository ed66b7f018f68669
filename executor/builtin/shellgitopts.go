package builtin

import (
	"slices"
	"strings"
)

// gitOption is one option of a git subcommand that makes git run a
// program, obey a hook, copy a template, set configuration or use an exec
// path or another repository: a command that gives it asks with the whole
// text.
type gitOption struct {
	// subs are the subcommands that have the option ("*": every one).
	subs []string
	// long are its long names, without "--"; git also takes any unique
	// prefix of one (--conf for --config), and so every prefix asks.
	long []string
	// short is its short letter, or 0; git takes it bundled with others
	// (-qc for -q -c) and its value attached (-ccore.x=y) or next.
	short byte
	// builtin, when set, are the values that run nothing of the command's
	// choosing (merge strategies git has built in); any other asks.
	builtin []string
	// why names what it runs, for the reason.
	why string
}

// gitOptions is the survey of git's documentation, made so: the OPTIONS of
// the manual page of git 2.39 of every subcommand of gitSubcommands
// (`man git-<subcommand>`) were split into options with their
// descriptions; those whose name or description mentions a program,
// command, hook, template, configuration, exec path, upload-pack,
// receive-pack, ssh or proxy command, editor, pager, tool, filter,
// textconv, askpass, gpg, shell, script, strategy, driver, helper,
// reference, alternate or separate git directory (650 of them) were read
// one by one; and the options kept are those whose program, directory or
// configuration the command itself names or enables. The forms were tried
// with git: parse-options commands take any unique prefix of a long option
// (clone --conf and -qccore.x=y set configuration, rebase --ex runs its
// command), the diff and log options only the whole name (log --ext-d is
// refused); every prefix asks. Left out, for they run only what the
// configuration (protected, see Protected paths) or the environment (which
// bash's analysis guards) names: the editors (-e, --edit, -i), the gpg
// options (-S, --gpg-sign, --show-signature, --verify-signatures, tag
// -s/-u/-v, push --signed), the hooks' switches (--verify, --no-verify),
// help's viewers (-w, -i, -m) and commit --template (a message file).
// Positional forms that run programs (bisect run, submodule foreach, git
// config writes) and the repositories commands name (gitRepoArgs) are
// judged in shellgit.go.
var gitOptions = []gitOption{
	{subs: []string{"clone"}, long: []string{"config"}, short: 'c', why: "sets configuration (core.sshCommand, core.gitProxy, core.hooksPath, …) of the new repository before it fetches"},
	{subs: []string{"clone", "init"}, long: []string{"template"}, why: "copies hooks from a template directory"},
	{subs: []string{"clone", "init"}, long: []string{"separate-git-dir"}, why: "puts the repository, its hooks and configuration, in another directory"},
	{subs: []string{"clone", "submodule"}, long: []string{"reference", "reference-if-able"}, why: "borrows another repository's objects"},
	{subs: []string{"clone"}, long: []string{"upload-pack"}, short: 'u', why: "runs a program in place of git-upload-pack"},
	{subs: []string{"*"}, long: []string{"upload-pack", "exec", "receive-pack"}, why: "runs a program in place of git's own transport program"},
	{subs: []string{"rebase"}, long: []string{"exec"}, short: 'x', why: "runs a command after each commit"},
	{subs: []string{"grep"}, long: []string{"open-files-in-pager"}, short: 'O', why: "runs a pager of its choosing"},
	{subs: []string{"merge", "pull", "rebase"}, long: []string{"strategy"}, short: 's', builtin: gitStrategies, why: "runs git-merge-<strategy>, a program on PATH"},
	{subs: []string{"cherry-pick", "revert"}, long: []string{"strategy"}, builtin: gitStrategies, why: "runs git-merge-<strategy>, a program on PATH"},
	{subs: []string{"archive"}, long: []string{"remote"}, why: "runs git-upload-archive in another repository, under its configuration (tar.<format>.command)"},
	{subs: []string{"*"}, long: []string{"ext-diff", "textconv"}, why: "runs the external diff and textconv programs that attributes name"},
	{subs: []string{"cat-file"}, long: []string{"filters"}, why: "runs the filters that attributes name"},
	{subs: []string{"*"}, long: []string{"extcmd", "tool"}, why: "runs a diff or merge tool"},
}

// gitStrategies are git's built-in merge strategies.
var gitStrategies = []string{"ort", "recursive", "resolve", "octopus", "ours", "subtree"}

// gitExactSafe are documented long options that are themselves a prefix of
// one of gitOptions (diff --text of --textconv, format-patch --to of
// --tool): an exact name is never an abbreviation.
var gitExactSafe = []string{"text", "to"}

// gitShortValues are, per subcommand with a short option in gitOptions, its
// short options that take a value: in a bundle, the letters after one are
// its value, not options.
var gitShortValues = map[string]string{
	"clone":  "obucj",
	"rebase": "sXSCx",
	"grep":   "ABCmefO",
	"merge":  "mFXSs",
	"pull":   "sXSoj",
}

// gitOptionAsk returns why args, the arguments of git subcommand sub,
// give one of gitOptions, or "". Every word is examined, even after "--"
// or where it may be another option's value: a word that only looks like
// one of them asks too.
func gitOptionAsk(sub string, args []string) string {
	for i, v := range args {
		next, hasNext := "", i+1 < len(args)
		if hasNext {
			next = args[i+1]
		}
		switch {
		case v == "--" || v == "-" || !strings.HasPrefix(v, "-"):
		case strings.HasPrefix(v, "--"):
			name, val, eq := strings.Cut(v[2:], "=")
			if !eq {
				val = next
			}
			for _, o := range gitOptions {
				if o.of(sub) && o.longMatch(name) && !o.builtinValue(val, eq || hasNext) {
					return "git " + sub + " --" + o.long[0] + ": " + o.why
				}
			}
		default:
			if why := gitShortAsk(sub, v[1:], next, hasNext); why != "" {
				return why
			}
		}
	}
	return ""
}

// gitShortAsk judges a bundle of short options (the word without its "-").
func gitShortAsk(sub, bundle, next string, hasNext bool) string {
	for j := 0; j < len(bundle); j++ {
		c := bundle[j]
		for _, o := range gitOptions {
			if o.short == 0 || o.short != c || !o.of(sub) {
				continue
			}
			val, has := bundle[j+1:], true
			if val == "" {
				val, has = next, hasNext
			}
			if !o.builtinValue(val, has) {
				return "git " + sub + " -" + string(c) + ": " + o.why
			}
		}
		if strings.IndexByte(gitShortValues[sub], c) >= 0 {
			return "" // the rest is its value
		}
	}
	return ""
}

func (o gitOption) of(sub string) bool {
	return slices.Contains(o.subs, "*") || slices.Contains(o.subs, sub)
}

// longMatch reports whether name, a long option as written (without "--"
// and value), is one of o's names or a prefix of one, as git's
// parse-options reads an abbreviation.
func (o gitOption) longMatch(name string) bool {
	if name == "" || slices.Contains(gitExactSafe, name) {
		return false
	}
	for _, l := range o.long {
		if strings.HasPrefix(l, name) {
			return true
		}
	}
	return false
}

// builtinValue reports whether val, the option's value (has: there is
// one), is one of o's built-in values; an option without them has none.
func (o gitOption) builtinValue(val string, has bool) bool {
	return o.builtin != nil && has && slices.Contains(o.builtin, val)
}
