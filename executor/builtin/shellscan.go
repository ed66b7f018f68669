package builtin

import (
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// shellMaxDepth bounds the nesting of commands that run commands (a wrapper
// in a wrapper, a `bash -c` string in a `sh -c` string): deeper asks.
const shellMaxDepth = 6

// shellAnalysis is what a bash command will run and write, as far as the
// parser can model it exactly.
type shellAnalysis struct {
	// cmds are the simple commands, each with its source text (the
	// permission resource) and its command name's base name ("" for one
	// of assignments only), in order of appearance, inner commands of
	// commands that run commands after their outer one.
	cmds []shellCommand
	// writes are the literal targets of output redirections and of the
	// file-writing options the analysis knows (find -fprint, time -o, git
	// --output), as written.
	writes []string
	// asks are the reasons the whole text must be confirmed: what the parser
	// cannot model exactly. Empty when it can.
	asks []string
	// changesDir is set by a cd, pushd or popd: relative write targets may
	// then resolve elsewhere than the working directory.
	changesDir bool
	// readsFile is set by an input redirection from a file (< f, 3< f): a
	// write to a standard stream's name (/dev/stdin, /dev/fd/N) would then
	// reopen that file, which no edit request judged, for writing.
	readsFile bool
	// gitRepos are bare words git commands name as their repository: a
	// remote's name, or else a path, which asks (see gitRepoArgs and
	// gitRemoteConfigured).
	gitRepos []string
	// parsed is false when the text does not parse.
	parsed bool
}

// shellCommand is one simple command found in a shell text.
type shellCommand struct {
	text string
	name string
}

func (a *shellAnalysis) ask(reason string) { a.asks = append(a.asks, reason) }

// analyzeBash analyzes command as bash parses it.
func analyzeBash(command string) *shellAnalysis {
	a := &shellAnalysis{parsed: true}
	f, err := parseShell(command, syntax.LangBash)
	if err != nil {
		a.parsed = false
		return a
	}
	(&shellScanner{src: command, out: a}).file(f)
	return a
}

func parseShell(src string, lang syntax.LangVariant) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
}

// shellScanner walks one parsed text; offsets of its nodes are into src.
type shellScanner struct {
	src   string
	depth int
	out   *shellAnalysis
}

// text is the trimmed source text between two offsets ("" when they are not
// a range of src).
func (s *shellScanner) text(start, end int) string {
	if start < 0 || end > len(s.src) || start >= end {
		return ""
	}
	return strings.TrimSpace(s.src[start:end])
}

func (s *shellScanner) add(text, name string) {
	if text == "" {
		return
	}
	s.out.cmds = append(s.out.cmds, shellCommand{text: text, name: name})
}

func (s *shellScanner) file(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				s.redirect(r)
			}
		case *syntax.CallExpr:
			s.call(n)
		case *syntax.DeclClause:
			s.decl(n)
		case *syntax.LetClause:
			s.add(s.text(int(n.Pos().Offset()), int(n.End().Offset())), "let")
			for _, x := range n.Exprs {
				s.arithm(x, "let")
			}
		case *syntax.ArithmCmd:
			s.arithm(n.X, "((…))")
		case *syntax.ArithmExp:
			s.arithm(n.X, "$((…))")
		case *syntax.CStyleLoop:
			s.arithm(n.Init, "for ((…))")
			s.arithm(n.Cond, "for ((…))")
			s.arithm(n.Post, "for ((…))")
		case *syntax.ParamExp:
			s.param(n)
		case *syntax.TestClause:
			s.test(n.X)
		case *syntax.CoprocClause:
			s.out.ask("coproc")
		case *syntax.ArrayElem:
			s.arithm(n.Index, "an array subscript")
		case *syntax.WordIter:
			s.setsVar(n.Name.Value)
		}
		return true
	})
}

// redirect records an output redirection's target; a target that is not a
// literal asks, and so does bash's network pseudo-device in any redirection.
func (s *shellScanner) redirect(r *syntax.Redirect) {
	if r.Hdoc != nil && hasSubstitution(r.Hdoc) {
		s.out.ask("a here-document with substitutions")
	}
	if r.Hdoc != nil && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && unquotedDelimiter(r.Word) {
		// From the delimiter on: the parser's body starts after a leading continuation.
		if start, end := int(r.Word.End().Offset()), int(r.Hdoc.End().Offset()); start >= 0 && end <= len(s.src) && start < end &&
			strings.Contains(s.src[start:end], "\\\n") {
			// bash joins continued lines before it looks for the delimiter
			s.out.ask("a here-document with a line continuation")
		}
	}
	if r.Word == nil {
		return
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return // > >(cmd): a pipe to a command, which is walked
		}
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrInOut, syntax.RdrAll, syntax.AppAll, syntax.DplOut:
	case syntax.RdrIn, syntax.DplIn, syntax.WordHdoc:
		v, ok := literal(r.Word)
		if ok && isNetDevice(v) {
			s.out.ask("a network redirection")
		}
		if c := filepath.Clean(v); r.Op == syntax.RdrIn && (!ok || c != "/dev/null" && !streamDevice.MatchString(c)) {
			s.out.readsFile = true
		}
		return
	default:
		return // here-documents: their delimiter is no path
	}
	v, ok := literal(r.Word)
	if !ok {
		s.out.ask("a redirection target that is not a literal")
		return
	}
	if r.Op == syntax.DplOut && (v == "-" || isDigits(strings.TrimSuffix(v, "-"))) {
		return // >&2, >&-, >&3-: a file descriptor
	}
	if isNetDevice(v) {
		s.out.ask("a network redirection")
		return
	}
	s.out.writes = append(s.out.writes, v)
}

// unquotedDelimiter reports a here-document delimiter without quotes or
// backslashes: its body is expanded, and its lines continue.
func unquotedDelimiter(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok || strings.Contains(lit.Value, "\\") {
			return false
		}
	}
	return true
}

// isNetDevice reports bash's /dev/tcp and /dev/udp pseudo-devices, which
// open network connections.
func isNetDevice(p string) bool {
	p = path.Clean(p)
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// hasSubstitution reports a command, arithmetic or process substitution in w.
func hasSubstitution(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			found = true
		}
		return !found
	})
	return found
}

// decl is a declaration builtin (declare, local, export, readonly, typeset):
// a resource; -i (arithmetic on every assignment) and -n (a name reference,
// whose subscript bash evaluates) ask.
func (s *shellScanner) decl(d *syntax.DeclClause) {
	s.add(s.text(int(d.Pos().Offset()), int(d.End().Offset())), d.Variant.Value)
	for _, a := range d.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			v, ok := literal(a.Value)
			if !ok {
				s.out.ask("a declaration option that is not a literal")
				continue
			}
			if strings.HasPrefix(v, "-") && strings.ContainsAny(v, "in") {
				s.out.ask("declare -i or -n")
			}
			if strings.Contains(v, "[") {
				s.out.ask("a subscripted name given to a builtin")
			}
		}
		s.assign(a)
	}
}

func (s *shellScanner) assign(a *syntax.Assign) {
	if a.Name != nil {
		s.setsVar(a.Name.Value)
	}
	if a.Index != nil {
		s.arithm(a.Index, "an array subscript")
	}
}
