package builtin

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shell analyses sh/dash/ash/bash: only -c with a literal string can be
// known, and it is parsed recursively; a script file, standard input, an
// interactive or login shell (startup files) ask.
func (s *shellScanner) shell(base string, args []*syntax.Word, level int) {
	cmdMode := false
	i := 0
	for ; i < len(args); i++ {
		v, ok := literal(args[i])
		if !ok {
			s.out.ask("a shell option that is not a literal")
			return
		}
		if v == "--norc" || v == "--noprofile" || v == "--posix" {
			continue
		}
		if v == "--" || v == "-" {
			i++
			break
		}
		if len(v) < 2 || (v[0] != '-' && v[0] != '+') {
			break
		}
		if strings.HasPrefix(v, "--") || strings.ContainsAny(v[1:], "ilsOD") || strings.Trim(v[1:], "abcefhkmnoptuvxBCEHPT") != "" {
			s.out.ask(base + " with an option the analysis does not model")
			return
		}
		if strings.Contains(v, "o") {
			i++ // -o NAME
		}
		if v[0] == '-' && strings.Contains(v, "c") {
			cmdMode = true
		}
	}
	if !cmdMode || i >= len(args) {
		s.out.ask(base + " reading a script or standard input")
		return
	}
	str, ok := literal(args[i])
	if !ok {
		s.out.ask(base + " -c with a string that is not a literal")
		return
	}
	lang := syntax.LangPOSIX
	if base == "bash" {
		lang = syntax.LangBash
	}
	s.shellString(str, lang, level+1)
}

// shellString analyses a string another shell runs, into s's analysis. A
// POSIX sh string counts only when bash's parse of it yields the same: the
// parser models dash by that agreement.
func (s *shellScanner) shellString(str string, lang syntax.LangVariant, level int) {
	if level > shellMaxDepth {
		s.out.ask("commands nested too deep")
		return
	}
	sub := s.subAnalysis(str, lang, level)
	if sub == nil {
		s.out.ask("a shell string that does not parse")
		return
	}
	if lang != syntax.LangBash {
		other := s.subAnalysis(str, syntax.LangBash, level)
		if other == nil || !sameAnalysis(sub, other) {
			s.out.ask("a sh -c string that bash and POSIX sh read differently")
			return
		}
	}
	s.out.cmds = append(s.out.cmds, sub.cmds...)
	s.out.writes = append(s.out.writes, sub.writes...)
	s.out.asks = append(s.out.asks, sub.asks...)
	s.out.changesDir = s.out.changesDir || sub.changesDir
	s.out.readsFile = s.out.readsFile || sub.readsFile
	s.out.gitRepos = append(s.out.gitRepos, sub.gitRepos...)
}

func (s *shellScanner) subAnalysis(str string, lang syntax.LangVariant, level int) *shellAnalysis {
	f, err := parseShell(str, lang)
	if err != nil {
		return nil
	}
	sub := &shellAnalysis{parsed: true}
	(&shellScanner{src: str, depth: level, out: sub}).file(f)
	return sub
}

func sameAnalysis(a, b *shellAnalysis) bool {
	if len(a.cmds) != len(b.cmds) || len(a.writes) != len(b.writes) || len(a.asks) != len(b.asks) {
		return false
	}
	for i := range a.cmds {
		if a.cmds[i] != b.cmds[i] {
			return false
		}
	}
	for i := range a.writes {
		if a.writes[i] != b.writes[i] {
			return false
		}
	}
	return true
}

// watch runs its words joined by spaces with sh -c, or with -x as a command.
func (s *shellScanner) watch(args []*syntax.Word, end, level int) {
	i, exec, ok := s.options("watch", watchSpec, args)
	if !ok || i >= len(args) {
		return
	}
	if exec {
		s.inner(args[i:], int(args[i].Pos().Offset()), end, level+1, false)
		return
	}
	vals, ok := literals(args[i:])
	if !ok {
		s.out.ask("watch with a command that is not a literal")
		return
	}
	s.shellString(strings.Join(vals, " "), syntax.LangPOSIX, level+1)
}
