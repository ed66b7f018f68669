package builtin

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// gitSubcommands are git's own commands that run no program named by their
// arguments or by git configuration beyond what protected paths guard
// (hooks, .git/config). Any other word in the subcommand's place is an alias
// (which may be "!program") or a git-NAME executable on PATH: it asks.
var gitSubcommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`add am annotate apply archive bisect blame branch bundle cat-file
		check-attr check-ignore check-mailmap check-ref-format checkout checkout-index cherry
		cherry-pick clean clone commit commit-graph commit-tree config count-objects describe diff
		diff-files diff-index diff-tree fetch for-each-ref format-patch fsck gc grep hash-object help
		init interpret-trailers log ls-files ls-remote ls-tree merge merge-base merge-file merge-tree
		mktag mktree mv name-rev notes pack-refs prune pull push range-diff read-tree rebase reflog
		remote repack replace rerere reset restore rev-list rev-parse revert rm shortlog show
		show-branch show-ref sparse-checkout stash status stripspace submodule switch symbolic-ref
		tag update-index update-ref var verify-commit verify-pack verify-tag version whatchanged
		worktree write-tree`) {
		gitSubcommands[c] = true
	}
}

// gitGlobalFlags are git's options before the subcommand that take no
// argument and run nothing. Not --bare: it names the working directory as
// a repository explicitly, so safe.bareRepository lets git obey a bare
// repository's configuration there (a textconv a model wrote).
var gitGlobalFlags = map[string]bool{
	"-p": true, "--paginate": true, "-P": true, "--no-pager": true,
	"--no-replace-objects": true, "--literal-pathspecs": true, "--glob-pathspecs": true,
	"--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-optional-locks": true,
	"--no-advice": true, "--version": true, "--help": true, "-h": true, "--html-path": true,
	"--man-path": true, "--info-path": true, "--exec-path": true,
}

// git analyses a git command. What can make git execute a program asks with
// the whole text: -c and --config-env (core.pager, core.sshCommand,
// alias.x=!…), --exec-path=DIR, another repository (-C, --git-dir,
// --work-tree: its hooks and configuration), an unknown subcommand (an
// alias or a git-NAME program), the options of a subcommand that name a
// program, hook, template, configuration or repository (gitOptions: clone
// -c, rebase --exec, grep -O, --upload-pack, …, in every form git reads),
// a local repository or remote helper named as a remote (gitRepoArgs),
// bisect run, submodule foreach, and git config that is not a read. Every
// word must be a literal: an expansion could become any of these.
func (s *shellScanner) git(args []*syntax.Word, end int) {
	vals, ok := literals(args)
	if !ok {
		s.out.ask("a git argument that is not a literal")
		return
	}
	i := 0
	for ; i < len(vals); i++ {
		v := vals[i]
		if !strings.HasPrefix(v, "-") {
			break
		}
		if !gitGlobalFlags[v] {
			s.out.ask("git option " + v)
			return
		}
	}
	if i >= len(vals) {
		return
	}
	sub, rest := vals[i], vals[i+1:]
	if !gitSubcommands[sub] {
		s.out.ask("git " + sub + ": an alias or an external git command")
		return
	}
	if strings.Contains(strings.Join(rest, " "), "ext::") {
		s.out.ask("git's ext:: transport")
		return
	}
	if reason := gitOptionAsk(sub, rest); reason != "" {
		s.out.ask(reason)
		return
	}
	reason, words := gitRepoArgs(sub, rest)
	if reason != "" {
		s.out.ask(reason)
		return
	}
	s.out.gitRepos = append(s.out.gitRepos, words...)
	writes, reason := gitWrites(sub, rest)
	if reason != "" {
		s.out.ask(reason)
		return
	}
	s.out.writes = append(s.out.writes, writes...)
	switch sub {
	case "bisect":
		if len(rest) > 0 && rest[0] == "run" {
			s.out.ask("git bisect run")
		}
	case "submodule":
		for _, v := range rest {
			if v == "foreach" {
				s.out.ask("git submodule foreach")
			}
		}
	case "config":
		if !gitConfigReads(rest) {
			s.out.ask("git config that writes or edits")
		}
	}
}

// gitWrites returns the files git subcommand sub writes by its arguments
// (archive -o/--output, and --output of the diff and log commands, which
// take no abbreviation), or why the whole text must ask (format-patch
// -o/--output-directory, a directory of files).
func gitWrites(sub string, args []string) ([]string, string) {
	var writes []string
	for j, v := range args {
		next, hasNext := "", j+1 < len(args)
		if hasNext {
			next = args[j+1]
		}
		name, val, eq := strings.Cut(strings.TrimPrefix(v, "--"), "=")
		long := strings.HasPrefix(v, "--") && name != ""
		short := !long && strings.HasPrefix(v, "-") && v != "-" && v != "--"
		switch {
		case sub == "format-patch" && (short && strings.Contains(v, "o") || long && strings.HasPrefix(name, "output-d")):
			return nil, "git format-patch -o/--output-directory"
		case sub == "archive" && short && strings.Contains(v, "o"):
			val = v[strings.Index(v, "o")+1:]
			if val == "" && hasNext {
				val = next
			}
			if val != "" {
				writes = append(writes, val)
			}
		case long && (name == "output" || sub == "archive" && strings.HasPrefix("output", name)):
			if !eq && hasNext {
				val, eq = next, true
			}
			if eq {
				writes = append(writes, val)
			}
		}
	}
	return writes, ""
}

// gitConfigReads reports a git config invocation that only reads: a
// listing, a --get form or the get/list subcommand, or a single key.
func gitConfigReads(args []string) bool {
	positional := 0
	read := false
	for i := 0; i < len(args); i++ {
		switch v := args[i]; {
		case v == "-l" || v == "--list" || strings.HasPrefix(v, "--get") || (i == 0 && (v == "get" || v == "list")):
			read = true
		case i == 0 && (v == "set" || v == "unset" || v == "edit" || v == "rename-section" || v == "remove-section"):
			return false
		case v == "--show-origin" || v == "--show-scope" || v == "--null" || v == "-z" || v == "--name-only" ||
			v == "--global" || v == "--system" || v == "--local" || v == "--worktree" || strings.HasPrefix(v, "--type") ||
			v == "--bool" || v == "--int" || v == "--path" || v == "--includes" || v == "--no-includes":
		case v == "-f" || v == "--file" || v == "--blob" || v == "--default":
			i++
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--blob=") || strings.HasPrefix(v, "--default="):
		case strings.HasPrefix(v, "-"):
			return false // --add, --unset, --replace-all, -e, --edit, --rename-section, …
		default:
			positional++
		}
	}
	if read {
		return true
	}
	return positional <= 1
}
