package builtin

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapperSpec is how a command that runs another command takes its options:
// the inner command is its first word after them.
type wrapperSpec struct {
	flags   []string // options without an argument (short ones may be clustered)
	withArg []string // options with an argument: the next word, attached (-n5) or after = (--x=5)
	optArg  []string // short options with an optional attached argument (xargs -i[R])
	writes  []string // options with an argument that is a file the command writes
	chdir   []string // options with an argument that is the inner command's working directory
	exec    string   // the option that makes watch run its words as a command
	// positional is the number of words between the options and the
	// command (timeout's duration).
	positional int
	assigns    bool // NAME=value words may come before the command (env, sudo)
	numeric    bool // -N is an option (nice -10)
	dashFlag   bool // a lone "-" is an option (env -)
	// unsets are options whose argument is a variable the inner command
	// runs without (env -u): unsetting one of isCodeVar asks, as setting
	// it does.
	unsets []string
	// clears are options that run the inner command with an empty
	// environment (env -i, and "-" with dashFlag): they ask, since the
	// inner command then runs without the settings bash gets (bashEnv).
	clears []string
}

var (
	xargsSpec = wrapperSpec{
		flags:   []string{"-0", "-r", "-t", "-p", "-x", "-o", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty"},
		withArg: []string{"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--replace", "--process-slot-var"},
		optArg:  []string{"-e", "-i", "-l"},
	}
	envSpec = wrapperSpec{
		flags:    []string{"-i", "-0", "-v", "--ignore-environment", "--null", "--debug"},
		withArg:  []string{"-u", "-C", "--unset", "--chdir"},
		chdir:    []string{"-C", "--chdir"},
		assigns:  true,
		dashFlag: true,
		unsets:   []string{"-u", "--unset"},
		clears:   []string{"-i", "--ignore-environment", "-"},
	}
	commandSpec = wrapperSpec{flags: []string{"-p"}}
	watchSpec   = wrapperSpec{
		flags:   []string{"-b", "-c", "-d", "-e", "-g", "-t", "-w", "-p", "-r", "--beep", "--color", "--no-color", "--differences", "--errexit", "--chgexit", "--no-title", "--no-wrap", "--precise", "--no-rerun"},
		withArg: []string{"-n", "-q", "--interval", "--equexit"},
		exec:    "-x",
	}
	wrapperSpecs = map[string]wrapperSpec{
		"nice":    {withArg: []string{"-n", "--adjustment"}, numeric: true},
		"nohup":   {},
		"timeout": {flags: []string{"-v", "--preserve-status", "--foreground", "--verbose"}, withArg: []string{"-k", "-s", "--kill-after", "--signal"}, positional: 1},
		"sudo": {
			flags:   []string{"-A", "-b", "-E", "-H", "-k", "-n", "-P", "-S", "-B", "-N", "--askpass", "--background", "--preserve-env", "--set-home", "--non-interactive", "--stdin", "--bell", "--preserve-groups"},
			withArg: []string{"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--chroot"},
			chdir:   []string{"-D", "--chdir"},
			assigns: true,
		},
		"doas":    {flags: []string{"-n"}, withArg: []string{"-u"}},
		"time":    {flags: []string{"-p", "-a", "-v", "-q", "--portability", "--append", "--verbose", "--quiet"}, withArg: []string{"-f", "--format"}, writes: []string{"-o", "--output"}},
		"builtin": {},
		"exec":    {flags: []string{"-c", "-l"}, withArg: []string{"-a"}},
		"setsid":  {flags: []string{"-c", "-f", "-w", "--ctty", "--fork", "--wait"}},
		"stdbuf":  {withArg: []string{"-i", "-o", "-e", "--input", "--output", "--error"}},
	}
)

// wrapper analyses a command that runs the command after its options: the
// inner command is a resource of its own (with the NAME=value words before
// it, for env and sudo). An option it does not know, or one that is not a
// literal, asks: the inner command cannot be known.
func (s *shellScanner) wrapper(name string, spec wrapperSpec, args []*syntax.Word, end, level int, open bool) {
	i, _, ok := s.options(name, spec, args)
	if !ok {
		return
	}
	from := -1
	for ; spec.assigns && i < len(args); i++ {
		v, ok := literal(args[i])
		if !ok {
			s.out.ask("an argument of " + name + " that is not a literal")
			return
		}
		k, _, found := strings.Cut(v, "=")
		if !found {
			break // env and sudo take any word holding "=" for an assignment, whatever its name
		}
		s.setsVar(k)
		if from < 0 {
			from = int(args[i].Pos().Offset())
		}
	}
	if i >= len(args) {
		return // no command: env prints, xargs runs echo
	}
	if from < 0 {
		from = int(args[i].Pos().Offset())
	}
	s.inner(args[i:], from, end, level+1, open)
}

// clearsEnv asks when opt is one of spec's options that empty the inner
// command's environment.
func (s *shellScanner) clearsEnv(name string, spec wrapperSpec, opt string) {
	if slices.Contains(spec.clears, opt) {
		s.out.ask(name + " " + opt + ", which runs the command without the environment bash runs with")
	}
}

// options skips spec's options at the start of args: it returns the index
// of the first word after them (and after the positional words), whether
// spec's exec option was given, and false (having asked) for an option it
// does not know or one that is not a literal.
func (s *shellScanner) options(name string, spec wrapperSpec, args []*syntax.Word) (int, bool, bool) {
	i, exec := 0, false
	unknown := func() (int, bool, bool) {
		s.out.ask(name + " with an option the analysis does not know")
		return 0, false, false
	}
	for i < len(args) {
		v, ok := literal(args[i])
		if !ok {
			s.out.ask("an option of " + name + " that is not a literal")
			return 0, false, false
		}
		if v == "--" {
			i++
			break
		}
		if v == "-" && spec.dashFlag {
			s.clearsEnv(name, spec, v)
			i++
			continue
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		opt, _, eq := strings.Cut(v, "=")
		if slices.Contains(spec.chdir, opt) || len(v) > 2 && slices.Contains(spec.chdir, v[:2]) {
			s.out.changesDir = true // the inner command's relative paths are elsewhere
		}
		switch {
		case v == spec.exec && v != "":
			exec = true
			i++
		case slices.Contains(spec.flags, opt) && (!eq || strings.HasPrefix(v, "--")):
			s.clearsEnv(name, spec, opt)
			i++
		case slices.Contains(spec.withArg, opt) || slices.Contains(spec.writes, opt):
			if !eq {
				if i+1 >= len(args) {
					return unknown()
				}
				i++
				val, ok := literal(args[i])
				if !ok {
					s.out.ask("an option of " + name + " that is not a literal")
					return 0, false, false
				}
				v = opt + "=" + val
			}
			if slices.Contains(spec.unsets, opt) {
				_, val, _ := strings.Cut(v, "=")
				s.setsVar(val)
			}
			if slices.Contains(spec.writes, opt) {
				_, val, _ := strings.Cut(v, "=")
				s.out.writes = append(s.out.writes, val)
			}
			i++
		case len(opt) > 2 && !strings.HasPrefix(v, "--") && slices.Contains(spec.writes, v[:2]):
			s.out.writes = append(s.out.writes, v[2:]) // -oFILE
			i++
		case len(opt) > 2 && !strings.HasPrefix(v, "--") && slices.Contains(spec.withArg, v[:2]):
			i++ // -n5
		case len(v) >= 2 && slices.Contains(spec.optArg, v[:2]):
			i++
		case spec.numeric && isDigits(v[1:]):
			i++
		case !strings.HasPrefix(v, "--") && clustered(v[1:], spec.flags):
			for _, c := range v[1:] {
				s.clearsEnv(name, spec, "-"+string(c))
			}
			i++
		default:
			return unknown()
		}
	}
	for n := 0; n < spec.positional; n++ {
		if i >= len(args) {
			return i, exec, true
		}
		if _, ok := literal(args[i]); !ok {
			s.out.ask("an argument of " + name + " that is not a literal")
			return 0, false, false
		}
		i++
	}
	return i, exec, true
}

// clustered reports a run of short flags, each of them in flags.
func clustered(letters string, flags []string) bool {
	if letters == "" {
		return false
	}
	for _, c := range letters {
		if !slices.Contains(flags, "-"+string(c)) {
			return false
		}
	}
	return true
}

// find's -exec, -execdir, -ok and -okdir run the words up to ";" or "+" as
// a command of their own; -fprint, -fprint0, -fprintf and -fls write the
// file after them. Every word of find must be a literal: an expansion could
// become -exec.
func (s *shellScanner) find(args []*syntax.Word, level int) {
	vals, ok := literals(args)
	if !ok {
		s.out.ask("a find argument that is not a literal")
		return
	}
	for i := 0; i < len(vals); i++ {
		switch vals[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			if strings.HasSuffix(vals[i], "dir") {
				s.out.changesDir = true // the command runs in each file's directory
			}
			j := i + 1
			for j < len(vals) && vals[j] != ";" && vals[j] != "+" {
				j++
			}
			if j == i+1 || j >= len(vals) {
				s.out.ask("find " + vals[i] + " without a command and its terminator")
				return
			}
			s.inner(args[i+1:j], int(args[i+1].Pos().Offset()), int(args[j-1].End().Offset()), level+1, false)
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 >= len(vals) {
				return
			}
			s.out.writes = append(s.out.writes, vals[i+1])
			i++
		}
	}
}
