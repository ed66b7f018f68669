package builtin

import (
	"errors"
	"fmt"
	"strings"
)

// The apply_patch format, as codex and opencode write it:
//
//	*** Begin Patch
//	*** Add File: path/new.go
//	+every line of the new file, each prefixed with +
//	*** Update File: path/old.go
//	*** Move to: path/renamed.go      (optional, right after Update File)
//	@@ an optional line to find first (a func signature, say)
//	 context line, prefixed with a space
//	-a line to remove
//	+a line to add
//	*** End of File                   (optional: the hunk ends the file)
//	*** Delete File: path/gone.go
//	*** End Patch
//
// The whole may be wrapped in a heredoc (see unwrapHeredoc). An update holds
// hunks, each starting with @@ (the first may omit it); applyHunks says how
// they are found in the file.

// Patch operations.
const (
	patchAdd    = "add"
	patchUpdate = "update"
	patchDelete = "delete"
)

// The marker lines.
const (
	beginMarker = "*** Begin Patch"
	endMarker   = "*** End Patch"
	moveMarker  = "*** Move to:"
	eofMarker   = "*** End of File"
)

// patchOp is one file's change.
type patchOp struct {
	kind   string
	path   string
	moveTo string      // update: the path the file moves to, "" for none
	lines  []string    // add: the new file's lines
	hunks  []patchHunk // update
}

// patchHunk is one change inside an updated file.
type patchHunk struct {
	anchor string     // the @@ line's text: found first, "" for none
	lines  []hunkLine // in patch order
	eof    bool       // *** End of File: the hunk's old lines end the file
}

// hunkLine is one line of a hunk: op is ' ' (context), '-' or '+'.
type hunkLine struct {
	op   byte
	text string
}

// old returns the lines the hunk expects in the file, in order.
func (h patchHunk) old() []string { return h.side('+') }

// new returns the lines the hunk leaves, as the patch writes them.
func (h patchHunk) new() []string { return h.side('-') }

func (h patchHunk) side(skip byte) []string {
	var out []string
	for _, l := range h.lines {
		if l.op != skip {
			out = append(out, l.text)
		}
	}
	return out
}

// parsePatch reads a patch; every error names the line of text it stopped
// at, counting from 1.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	first, last := trimBlank(lines, 0, len(lines))
	if first == last {
		return nil, errors.New("the patch is empty: it starts with \"*** Begin Patch\"")
	}
	first, last, err := unwrapHeredoc(lines, first, last)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(lines[first]) != beginMarker {
		return nil, fmt.Errorf("line %d: a patch starts with %q", first+1, beginMarker)
	}
	if last-first < 2 || strings.TrimSpace(lines[last-1]) != endMarker {
		return nil, fmt.Errorf("line %d: a patch ends with %q", last, endMarker)
	}
	var p patchParser
	for i := first + 1; i < last-1; i++ {
		if err := p.line(lines[i], i+1); err != nil {
			return nil, err
		}
	}
	return p.finish()
}

// trimBlank narrows lines[first:last] to drop blank lines at either end.
func trimBlank(lines []string, first, last int) (int, int) {
	for first < last && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	for last > first && strings.TrimSpace(lines[last-1]) == "" {
		last--
	}
	return first, last
}

// patchParser reads the lines between the Begin and End markers.
type patchParser struct {
	ops         []patchOp
	afterHeader bool // the previous line was a file header
}

// line reads line n of the text.
func (p *patchParser) line(line string, n int) error {
	if kind, path, ok := fileHeader(line); ok {
		if path == "" {
			return fmt.Errorf("line %d: %q names no file", n, line)
		}
		p.ops = append(p.ops, patchOp{kind: kind, path: path})
		p.afterHeader = true
		return nil
	}
	if len(p.ops) == 0 {
		return fmt.Errorf("line %d: %q before any \"*** Add File:\", \"*** Update File:\" or \"*** Delete File:\"", n, line)
	}
	op := &p.ops[len(p.ops)-1]
	afterHeader := p.afterHeader
	p.afterHeader = false
	if rest, ok := strings.CutPrefix(line, moveMarker); ok {
		if op.kind != patchUpdate || !afterHeader {
			return fmt.Errorf("line %d: %q comes right after \"*** Update File:\"", n, moveMarker)
		}
		if op.moveTo = strings.TrimSpace(rest); op.moveTo == "" {
			return fmt.Errorf("line %d: %q names no file", n, line)
		}
		return nil
	}
	if strings.TrimRight(line, " \t") == eofMarker {
		if op.kind != patchUpdate || len(op.hunks) == 0 || len(op.hunks[len(op.hunks)-1].lines) == 0 || op.hunks[len(op.hunks)-1].eof {
			return fmt.Errorf("line %d: %q closes a hunk of \"*** Update File:\" after its lines", n, eofMarker)
		}
		op.hunks[len(op.hunks)-1].eof = true
		return nil
	}
	if strings.HasPrefix(line, "***") {
		return fmt.Errorf("line %d: %q is not a patch line: the *** lines are Begin Patch, Add File:, Update File:, Move to:, End of File, Delete File: and End Patch", n, line)
	}
	switch op.kind {
	case patchDelete:
		return fmt.Errorf("line %d: a deleted file takes no lines", n)
	case patchAdd:
		text, ok := strings.CutPrefix(line, "+")
		if !ok {
			return fmt.Errorf("line %d: every line of an added file starts with +", n)
		}
		op.lines = append(op.lines, text)
		return nil
	}
	if anchor, ok := strings.CutPrefix(line, "@@"); ok {
		op.hunks = append(op.hunks, patchHunk{anchor: strings.TrimSpace(anchor)})
		return nil
	}
	if len(op.hunks) == 0 {
		op.hunks = append(op.hunks, patchHunk{}) // a first hunk may omit @@
	}
	h := &op.hunks[len(op.hunks)-1]
	if h.eof {
		return fmt.Errorf("line %d: the hunk ended at %q: start the next one with @@", n, eofMarker)
	}
	switch {
	case line == "":
		h.lines = append(h.lines, hunkLine{' ', ""})
	case line[0] == ' ' || line[0] == '-' || line[0] == '+':
		h.lines = append(h.lines, hunkLine{line[0], line[1:]})
	default:
		return fmt.Errorf("line %d: a hunk line starts with space, - or +", n)
	}
	return nil
}

// finish checks what only the whole patch shows.
func (p *patchParser) finish() ([]patchOp, error) {
	if len(p.ops) == 0 {
		return nil, errors.New("the patch changes no file")
	}
	for _, op := range p.ops {
		if op.kind != patchUpdate {
			continue
		}
		if len(op.hunks) == 0 && op.moveTo == "" {
			return nil, fmt.Errorf("update %s: no hunks", op.path)
		}
		for j, h := range op.hunks {
			if len(h.lines) == 0 {
				return nil, fmt.Errorf("update %s: hunk %d has no lines", op.path, j+1)
			}
		}
	}
	return p.ops, nil
}

// patchHeaders are the lines that start a file's section, by kind.
var patchHeaders = [...]struct{ prefix, kind string }{
	{"*** Add File:", patchAdd}, {"*** Update File:", patchUpdate}, {"*** Delete File:", patchDelete},
}

func fileHeader(line string) (kind, path string, ok bool) {
	for _, h := range patchHeaders {
		if rest, found := strings.CutPrefix(line, h.prefix); found {
			return h.kind, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}
