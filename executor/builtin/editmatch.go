package builtin

import (
	"strings"
)

// How edit finds oldString: exactly first, then, only when the exact pass
// finds nothing, the tolerant passes in this order, each used only when it
// finds exactly one place. oldString and newString are first written in the
// file's line ending (so a CRLF oldString matches an LF file, and the
// reverse). The tolerant passes that compare lines compare whole lines.

// matchPass names the pass that found oldString, as the result reports it.
type matchPass string

const (
	passExact    matchPass = ""
	passTrailing matchPass = "ignoring trailing whitespace"
	passIndent   matchPass = "with the indentation shifted as a block"
	passEscapes  matchPass = `with the escapes \n \t \" \' \\ in oldString and newString read as the characters`
	passPunct    matchPass = "ignoring typographic punctuation (curly quotes, dashes, non-breaking spaces)"
)

// splice is one replacement: content[start:end] becomes text.
type splice struct {
	start, end int
	text       string
}

// matchIn is what a pass searches: the file's content (no byte-order mark),
// its line ending, and oldString and newString written in that ending.
type matchIn struct {
	content, eol string
	old, repl    string
	rawOld       string // oldString as the model wrote it
	rawRepl      string
}

// tolerantPasses are tried in order once the exact pass found nothing.
var tolerantPasses = [...]struct {
	name matchPass
	find func(m matchIn) []splice
}{
	{passTrailing, trailingPass},
	{passIndent, indentPass},
	{passEscapes, escapesPass},
	{passPunct, punctPass},
}

// lineEnding is the line ending most of content's lines end with ("\n"
// when as many end with a bare LF, or none ends).
func lineEnding(content string) string {
	crlf := strings.Count(content, "\r\n")
	if crlf > 0 && 2*crlf > strings.Count(content, "\n") {
		return "\r\n"
	}
	if crlf > 0 && 2*crlf == strings.Count(content, "\n") {
		return "\r\n" // a tie: as before, a file with CRLF lines keeps them
	}
	return "\n"
}

// withEnding writes s's line breaks (CRLF or LF) as eol.
func withEnding(s, eol string) string {
	if !strings.Contains(s, "\r\n") && (eol == "\n" || !strings.Contains(s, "\n")) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}

// lines is content cut into lines: line i is content[start[i]:end[i]]
// without its line break, next[i] the offset after the break.
type lines struct {
	start, end, next []int
}

func cutLines(s string) lines {
	var l lines
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			if i < len(s) {
				l.start, l.end, l.next = append(l.start, i), append(l.end, len(s)), append(l.next, len(s))
			}
			return l
		}
		e := i + j
		if e > i && s[e-1] == '\r' {
			e--
		}
		l.start, l.end, l.next = append(l.start, i), append(l.end, e), append(l.next, i+j+1)
		i += j + 1
	}
}

// oldLines cuts oldString into lines without their breaks; nl says it ended
// with a line break.
func oldLines(old string) (ls []string, nl bool) {
	old = strings.ReplaceAll(old, "\r\n", "\n")
	nl = strings.HasSuffix(old, "\n")
	return strings.Split(strings.TrimSuffix(old, "\n"), "\n"), nl
}

func rtrim(s string) string { return strings.TrimRight(s, " \t\r") }

// windows returns the splices for every run of len(want) lines of content
// that same accepts, each replaced by the text text returns for it.
func windows(m matchIn, same func(file, old []string) (string, bool)) []splice {
	want, nl := oldLines(m.old)
	l := cutLines(m.content)
	var out []splice
	file := make([]string, len(want))
	for i := 0; i+len(want) <= len(l.start); i++ {
		for k := range want {
			file[k] = m.content[l.start[i+k]:l.end[i+k]]
		}
		text, ok := same(file, want)
		if !ok {
			continue
		}
		last := i + len(want) - 1
		end := l.end[last]
		if nl {
			end = l.next[last]
		}
		out = append(out, splice{start: l.start[i], end: end, text: text})
		i = last // matches do not overlap
	}
	return out
}

// trailingPass matches whole lines with trailing spaces and tabs ignored on
// both sides.
func trailingPass(m matchIn) []splice {
	return windows(m, func(file, old []string) (string, bool) {
		for k := range old {
			if rtrim(file[k]) != rtrim(old[k]) {
				return "", false
			}
		}
		return m.repl, true
	})
}

// indentPass matches whole lines whose indentation differs from
// oldString's by one prefix of whitespace, the same on every non-blank line
// (trailing whitespace ignored); newString's lines are shifted by it too.
func indentPass(m matchIn) []splice {
	return windows(m, func(file, old []string) (string, bool) {
		var add, drop string
		found := false
		for k := range old {
			f, o := rtrim(file[k]), rtrim(old[k])
			if (f == "") != (o == "") {
				return "", false
			}
			if f == "" {
				continue
			}
			if !found {
				fi, oi := indentOf(f), indentOf(o)
				switch {
				case strings.HasPrefix(fi, oi):
					add = fi[len(oi):]
				case strings.HasPrefix(oi, fi):
					drop = oi[len(fi):]
				default:
					return "", false
				}
				found = true
			}
			if add+strings.TrimPrefix(o, drop) != f || !strings.HasPrefix(o, drop) {
				return "", false
			}
		}
		if !found || add == "" && drop == "" {
			return "", false
		}
		return shiftLines(m.repl, add, drop), true
	})
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// shiftLines adds add to, and takes drop from, the start of every non-blank
// line of s (a line not starting with drop loses its indentation up to it).
func shiftLines(s, add, drop string) string {
	ls := strings.SplitAfter(s, "\n")
	for i, l := range ls {
		if rtrim(l) == "" || strings.TrimRight(l, "\r\n") == "" {
			continue
		}
		if drop != "" {
			if strings.HasPrefix(l, drop) {
				l = l[len(drop):]
			} else {
				l = strings.TrimLeft(l, " \t")
			}
		}
		ls[i] = add + l
	}
	return strings.Join(ls, "")
}

// unescape reads the escapes \n \t \r \" \' and \\ as the characters they
// stand for; ok is false when s holds none.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if r, ok := escaped[s[i+1]]; ok {
				b.WriteByte(r)
				i++
				changed = true
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), changed
}

var escaped = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '"': '"', '\'': '\'', '\\': '\\'}

// escapesPass matches oldString with its escapes read as characters (a
// model that escaped its text twice), exactly; newString is read the same
// way.
func escapesPass(m matchIn) []splice {
	old, ok := unescape(m.rawOld)
	if !ok {
		return nil
	}
	old = withEnding(old, m.eol)
	repl, _ := unescape(m.rawRepl)
	repl = withEnding(repl, m.eol)
	return occurrences(m.content, old, func(i int) splice { return splice{i, i + len(old), repl} })
}

// punctPass matches oldString exactly once both it and the file have their
// typographic punctuation folded (see foldPunct); newString is written as
// given.
func punctPass(m matchIn) []splice {
	if !hasPunct(m.content) && !hasPunct(m.old) {
		return nil
	}
	folded, at := foldPunctMap(m.content)
	old := NormalizePunct(m.old)
	return occurrences(folded, old, func(i int) splice { return splice{at[i], at[i+len(old)], m.repl} })
}

// occurrences returns a splice, made by mk from its offset, for every
// non-overlapping occurrence of old in s.
func occurrences(s, old string, mk func(int) splice) []splice {
	var out []splice
	if old == "" {
		return nil
	}
	for i := 0; ; {
		j := strings.Index(s[i:], old)
		if j < 0 {
			return out
		}
		out = append(out, mk(i+j))
		i += j + len(old)
	}
}
