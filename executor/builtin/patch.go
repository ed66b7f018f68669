package builtin

import (
	"fmt"
	"strings"
)

// The apply_patch format:
//
//	*** Begin Patch
//	*** Add File: path/new.go
//	+every line of the new file, each prefixed with +
//	*** Update File: path/old.go
//	@@ an optional line to find first (a func signature, say)
//	 context line, prefixed with a space
//	-a line to remove
//	+a line to add
//	*** Delete File: path/gone.go
//	*** End Patch
//
// An update holds one or more hunks, each starting with @@; a hunk's context
// and removed lines must match the file exactly, in order, after the
// previous hunk.

// Patch operations.
const (
	patchAdd    = "add"
	patchUpdate = "update"
	patchDelete = "delete"
)

// patchOp is one file's change.
type patchOp struct {
	kind  string
	path  string
	lines []string    // add: the new file's lines
	hunks []patchHunk // update
}

// patchHunk is one change inside an updated file.
type patchHunk struct {
	anchor   string   // the @@ line's text: found first, "" for none
	old, new []string // the lines the hunk expects and leaves
}

// parsePatch reads a patch; every error names the line it stopped at.
func parsePatch(text string) ([]patchOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "*** Begin Patch" {
		return nil, fmt.Errorf("line 1: a patch starts with \"*** Begin Patch\"")
	}
	if strings.TrimSpace(lines[len(lines)-1]) != "*** End Patch" {
		return nil, fmt.Errorf("line %d: a patch ends with \"*** End Patch\"", len(lines))
	}
	var ops []patchOp
	var op *patchOp
	for i := 1; i < len(lines)-1; i++ {
		line, n := lines[i], i+1
		if header, path, ok := fileHeader(line); ok {
			if path == "" {
				return nil, fmt.Errorf("line %d: %q names no file", n, line)
			}
			ops = append(ops, patchOp{kind: header, path: path})
			op = &ops[len(ops)-1]
			continue
		}
		if op == nil {
			return nil, fmt.Errorf("line %d: %q before any \"*** Add File:\", \"*** Update File:\" or \"*** Delete File:\"", n, line)
		}
		switch op.kind {
		case patchDelete:
			return nil, fmt.Errorf("line %d: a deleted file takes no lines", n)
		case patchAdd:
			if !strings.HasPrefix(line, "+") {
				return nil, fmt.Errorf("line %d: every line of an added file starts with +", n)
			}
			op.lines = append(op.lines, line[1:])
		case patchUpdate:
			if anchor, ok := strings.CutPrefix(line, "@@"); ok {
				op.hunks = append(op.hunks, patchHunk{anchor: strings.TrimSpace(anchor)})
				continue
			}
			if len(op.hunks) == 0 {
				op.hunks = append(op.hunks, patchHunk{}) // a first hunk may omit @@
			}
			h := &op.hunks[len(op.hunks)-1]
			switch {
			case line == "":
				h.old, h.new = append(h.old, ""), append(h.new, "")
			case line[0] == ' ':
				h.old, h.new = append(h.old, line[1:]), append(h.new, line[1:])
			case line[0] == '-':
				h.old = append(h.old, line[1:])
			case line[0] == '+':
				h.new = append(h.new, line[1:])
			default:
				return nil, fmt.Errorf("line %d: a hunk line starts with space, - or +", n)
			}
		}
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("the patch changes no file")
	}
	for _, op := range ops {
		if op.kind != patchUpdate {
			continue
		}
		if len(op.hunks) == 0 {
			return nil, fmt.Errorf("update %s: no hunks", op.path)
		}
		for j, h := range op.hunks {
			if len(h.old) == 0 && h.anchor == "" {
				return nil, fmt.Errorf("update %s: hunk %d has no context or removed lines to place it", op.path, j+1)
			}
		}
	}
	return ops, nil
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

// applyHunks applies an update's hunks to content, in order; each hunk is
// found after the previous one.
func applyHunks(content string, hunks []patchHunk) (string, error) {
	crlf := strings.Contains(content, "\r\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	trailing := strings.HasSuffix(content, "\n")
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	at := 0
	for j, h := range hunks {
		if h.anchor != "" {
			k := indexLine(lines, at, h.anchor)
			if k < 0 {
				return "", fmt.Errorf("hunk %d: @@ line %q not found", j+1, h.anchor)
			}
			at = k
			if len(h.old) == 0 { // insert right after the anchor
				at = k + 1
			}
		}
		k := indexLines(lines, at, h.old)
		if k < 0 {
			return "", fmt.Errorf("hunk %d: its context and removed lines were not found in order; read the file again", j+1)
		}
		lines = append(lines[:k], append(append([]string(nil), h.new...), lines[k+len(h.old):]...)...)
		at = k + len(h.new)
	}
	out := strings.Join(lines, "\n")
	if trailing {
		out += "\n"
	}
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return out, nil
}

func indexLine(lines []string, from int, want string) int {
	for i := from; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == want {
			return i
		}
	}
	return -1
}

func indexLines(lines []string, from int, want []string) int {
	for i := from; i+len(want) <= len(lines); i++ {
		match := true
		for j, w := range want {
			if lines[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return -1
}
