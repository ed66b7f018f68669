package builtin

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// call is a simple command: its whole text is a resource, and its command
// is analysed for what else it runs.
func (s *shellScanner) call(c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		s.assign(a)
	}
	text := s.text(int(c.Pos().Offset()), int(c.End().Offset()))
	if len(c.Args) == 0 {
		s.add(text, "")
		return
	}
	name, _ := literal(c.Args[0])
	s.add(text, path.Base(name))
	s.command(c.Args, int(c.End().Offset()), s.depth, false)
}

// inner adds a command another command runs — words, its text running from
// offset from (where NAME=value words may precede words) to end — as a
// resource of its own, and analyses it. open says the outer command appends
// words nobody can know (xargs).
func (s *shellScanner) inner(words []*syntax.Word, from, end, level int, open bool) {
	if level > shellMaxDepth {
		s.out.ask("commands nested too deep")
		return
	}
	name, _ := literal(words[0])
	s.add(s.text(from, end), path.Base(name))
	s.command(words, end, level, open)
}

// askNames are commands whose effect the parser cannot model: they run
// text as code (eval, source, fc), change how later text parses or which
// code a name runs (alias, shopt, enable, hash -p in hashCommand), or
// register code to run later (compgen -C, complete -C, bind -x).
var askNames = map[string]string{
	"eval": "eval", "source": "source", ".": "source", "alias": "alias", "shopt": "shopt",
	"enable": "enable", "fc": "fc", "compgen": "compgen", "complete": "complete", "bind": "bind",
	"coproc": "coproc", "sudoedit": "sudoedit",
	// Shells of other dialects, and runners whose command cannot be read off their words.
	"zsh": "a shell the parser does not model", "ksh": "a shell the parser does not model",
	"mksh": "a shell the parser does not model", "csh": "a shell the parser does not model",
	"tcsh": "a shell the parser does not model", "fish": "a shell the parser does not model",
	"busybox": "busybox", "su": "su", "runuser": "runuser", "script": "script", "parallel": "parallel",
	"flock": "flock", "strace": "strace", "ltrace": "ltrace", "gdb": "gdb", "chroot": "chroot",
	"unshare": "unshare", "nsenter": "nsenter", "systemd-run": "systemd-run", "ionice": "ionice",
	"chrt": "chrt", "taskset": "taskset", "setpriv": "setpriv", "pkexec": "pkexec", "at": "at",
	"batch": "batch", "expect": "expect", "unbuffer": "unbuffer", "xvfb-run": "xvfb-run",
	"dbus-run-session": "dbus-run-session", "git-shell": "git-shell",
}

// subscriptBuiltins take variable names, in which bash evaluates a
// subscript (running its command substitutions).
var subscriptBuiltins = map[string]bool{"read": true, "unset": true, "getopts": true, "wait": true, "mapfile": true, "readarray": true}

// command analyses the command words (name first) that end at offset end.
func (s *shellScanner) command(words []*syntax.Word, end, level int, open bool) {
	name, ok := literal(words[0])
	if !ok {
		s.out.ask("a command name that is not a literal")
		return
	}
	base := path.Base(name)
	args := words[1:]
	if reason, ok := askNames[base]; ok {
		s.out.ask(reason)
		return
	}
	if open && runsCommands(base) {
		s.out.ask(base + " given arguments from standard input")
		return
	}
	switch base {
	case "cd", "pushd", "popd":
		s.out.changesDir = true
	case "trap":
		s.trap(args)
	case "hash":
		s.hash(args)
	case "printf":
		if len(args) > 1 && s.rawHas(args[0], "-v") && s.rawHas(args[1], "[") {
			s.out.ask("a subscripted name given to a builtin")
		}
	case "test", "[":
		for i := 0; i+1 < len(args); i++ {
			if (s.rawHas(args[i], "-v") || s.rawHas(args[i], "-R")) && s.rawHas(args[i+1], "[") {
				s.out.ask("a subscripted name given to a builtin")
			}
		}
	case "git":
		s.git(args, end)
	case "find":
		s.find(args, level)
	case "xargs":
		s.wrapper(base, xargsSpec, args, end, level, true)
	case "env":
		s.wrapper(base, envSpec, args, end, level, open)
	case "sh", "dash", "ash", "bash":
		s.shell(base, args, level)
	case "watch":
		s.watch(args, end, level)
	case "command":
		for _, a := range args {
			if v, _ := literal(a); strings.HasPrefix(v, "-") && strings.ContainsAny(v, "vV") {
				return // command -v/-V only looks the name up
			}
		}
		s.wrapper(base, commandSpec, args, end, level, open)
	default:
		if spec, ok := wrapperSpecs[base]; ok {
			s.wrapper(base, spec, args, end, level, open)
		}
	}
	if subscriptBuiltins[base] {
		for _, a := range args {
			if v, ok := literal(a); ok {
				s.setsVar(v)
			} else if base == "unset" {
				s.out.ask("unset of a name that is not a literal") // it may be one of isCodeVar
			}
		}
	}
	if base == "printf" && len(args) > 1 && s.rawHas(args[0], "-v") {
		if v, ok := literal(args[1]); ok {
			s.setsVar(v)
		}
	}
	if subscriptBuiltins[base] {
		for _, a := range args {
			if s.rawHas(a, "[") {
				s.out.ask("a subscripted name given to a builtin")
				break
			}
		}
	}
	if base == "mapfile" || base == "readarray" {
		for _, a := range args {
			if s.rawHas(a, "-C") {
				s.out.ask("mapfile -C")
			}
		}
	}
}

// rawHas reports whether w's source text contains sub.
func (s *shellScanner) rawHas(w *syntax.Word, sub string) bool {
	return strings.Contains(s.text(int(w.Pos().Offset()), int(w.End().Offset())), sub)
}

// runsCommands reports the commands whose analysis needs all their words.
func runsCommands(base string) bool {
	switch base {
	case "git", "find", "xargs", "env", "sh", "dash", "ash", "bash", "watch", "command", "builtin", "exec", "trap":
		return true
	}
	_, ok := wrapperSpecs[base]
	return ok
}

// trap with a command string asks: the string runs later, on a signal or
// at exit. Listing traps, resetting (-) and ignoring (an empty string) do not.
func (s *shellScanner) trap(args []*syntax.Word) {
	if len(args) == 0 {
		return
	}
	v, ok := literal(args[0])
	switch {
	case !ok:
		s.out.ask("trap with a command")
	case v == "-p" || v == "-l" || v == "-P" || v == "-" || v == "":
	case v == "--" && len(args) > 1:
		s.trap(args[1:])
	default:
		s.out.ask("trap with a command")
	}
}

// hash -p binds a name to any file, which later runs in the name's place.
func (s *shellScanner) hash(args []*syntax.Word) {
	for _, a := range args {
		v, ok := literal(a)
		if !ok || strings.HasPrefix(v, "-") && strings.Contains(v, "p") {
			s.out.ask("hash -p")
			return
		}
	}
}
