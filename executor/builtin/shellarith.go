package builtin

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// param checks a parameter expansion: its subscript and slice are
// arithmetic; ${!x} (indirection evaluates a subscript in x's value) and
// ${x@P} (prompt expansion runs command substitutions in x's value) ask.
func (s *shellScanner) param(p *syntax.ParamExp) {
	if p.Index != nil {
		s.arithm(p.Index, "an array subscript")
	}
	if p.Slice != nil {
		s.arithm(p.Slice.Offset, "${x:offset:length}")
		s.arithm(p.Slice.Length, "${x:offset:length}")
	}
	if p.Excl && p.Names == 0 && p.Index == nil {
		s.out.ask("an indirect expansion ${!x}")
	}
	if p.Exp != nil && (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && p.Param != nil {
		s.setsVar(p.Param.Value)
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps {
		if v, _ := literal(p.Exp.Word); v != "Q" && v != "a" && v != "u" && v != "U" && v != "L" {
			s.out.ask("a ${x@op} transformation")
		}
	}
}

// arithm asks unless x holds only number literals: bash evaluates a
// variable's value in arithmetic as arithmetic, recursively, and a subscript
// in that value runs its command substitutions.
func (s *shellScanner) arithm(x syntax.ArithmExpr, where string) {
	if x == nil {
		return
	}
	exact := true
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			if !isNumberPart(w) {
				exact = false
			}
			return false
		}
		return exact
	})
	if !exact {
		s.out.ask("arithmetic (" + where + ") over a variable or an expansion")
	}
}

// isNumberPart reports a word of one number literal, or of one of the
// special parameters that are always numbers ($#, $?, $$, $!).
func isNumberPart(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		return isArithNumber(p.Value)
	case *syntax.ParamExp:
		return p.Param != nil && strings.Contains("#?$!", p.Param.Value) && len(p.Param.Value) == 1 &&
			!p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.Names == 0
	}
	return false
}

// isArithNumber reports a number literal of bash arithmetic (decimal, 0x
// hexadecimal, octal, base#digits) and the @ and * subscripts.
func isArithNumber(v string) bool {
	if v == "@" || v == "*" {
		return true
	}
	if v == "" || v[0] < '0' || v[0] > '9' {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '#' || c == '_' || c == '@') {
			return false
		}
	}
	return true
}

// test checks [[ … ]]: the operands of its arithmetic comparisons are
// arithmetic; -v and -R on a subscripted name evaluate the subscript.
func (s *shellScanner) test(x syntax.TestExpr) {
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryTest:
			switch n.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
				for _, side := range []syntax.TestExpr{n.X, n.Y} {
					if w, ok := side.(*syntax.Word); !ok || !isNumberWord(w) {
						s.out.ask("an arithmetic comparison in [[ … ]] over a variable or an expansion")
					}
				}
			}
		case *syntax.UnaryTest:
			if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
				if w, ok := n.X.(*syntax.Word); !ok || !isPlainName(w) {
					s.out.ask("[[ -v ]] on a subscripted or computed name")
				}
			}
		}
		return true
	})
}

func isNumberWord(w *syntax.Word) bool {
	if isNumberPart(w) {
		return true
	}
	v, ok := literal(w)
	return ok && isArithNumber(strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+"))
}

func isPlainName(w *syntax.Word) bool {
	v, ok := literal(w)
	return ok && !strings.ContainsAny(v, "[$`")
}
