package builtin

import (
	"fmt"
	"strings"
)

// applyHunks applies an update's hunks to content, in order, and returns
// the new content and a note for each hunk found by a pass looser than
// exact. Each hunk is searched after the previous one: from its @@ line when
// it has one (the first line at or after that point that matches, see
// seekAnchor), its context and removed lines with seekLines. Context lines
// keep the file's text; removed lines give way to the added ones as the
// patch writes them. A hunk of only added lines goes right after its @@ line,
// or at the end of the file for a bare @@ or one marked *** End of File. A
// hunk not found whose last line is a blank context line is searched again
// without it. The content comes back ending with a newline (unless it is
// empty), with CRLF throughout if the file held any, and with its byte-order
// mark if it had one.
func applyHunks(content string, hunks []patchHunk) (string, []string, error) {
	content, bom := strings.CutPrefix(content, "\uFEFF")
	crlf := strings.Contains(content, "\r\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	var lines []string
	if content != "" {
		lines = strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	}
	var notes []string
	at := 0
	for j, h := range hunks {
		if h.anchor != "" {
			k := seekAnchor(lines, at, h.anchor)
			if k < 0 {
				return "", nil, fmt.Errorf("hunk %d: @@ line %q not found", j+1, h.anchor)
			}
			at = k // the hunk's lines may repeat the @@ line
			if len(h.old()) == 0 && !h.eof {
				lines = spliceLines(lines, k+1, k+1, h.new())
				at = k + 1 + len(h.new())
				continue
			}
		}
		if len(h.old()) == 0 { // only added lines: at the end
			lines = append(lines, h.new()...)
			at = len(lines)
			continue
		}
		k, pass := seekLines(lines, at, h.old(), h.eof)
		dropped := false
		if n := len(h.lines); k < 0 && h.lines[n-1].op == ' ' && strings.TrimSpace(h.lines[n-1].text) == "" && n > 1 {
			h.lines = h.lines[:n-1]
			if len(h.old()) > 0 {
				k, pass = seekLines(lines, at, h.old(), h.eof)
				dropped = k >= 0
			}
		}
		if k < 0 {
			if h.eof {
				return "", nil, fmt.Errorf("hunk %d: it ends at *** End of File, and the file's last lines are not its context and removed lines; read the file again", j+1)
			}
			return "", nil, fmt.Errorf("hunk %d: its context and removed lines were not found in order after the previous hunk, exactly or ignoring whitespace or typographic punctuation; read the file again", j+1)
		}
		if note := matchNote(pass, dropped); note != "" {
			notes = append(notes, fmt.Sprintf("hunk %d matched %s", j+1, note))
		}
		var repl []string
		i := k
		for _, l := range h.lines {
			switch l.op {
			case ' ':
				repl = append(repl, lines[i])
				i++
			case '-':
				i++
			default:
				repl = append(repl, l.text)
			}
		}
		lines = spliceLines(lines, k, i, repl)
		at = k + len(repl)
	}
	out := strings.Join(lines, "\n")
	if len(lines) > 0 {
		out += "\n"
	}
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	if bom {
		out = "\uFEFF" + out
	}
	return out, notes, nil
}

// matchNote says how a hunk was found, "" for exactly.
func matchNote(pass hunkPass, droppedBlank bool) string {
	switch {
	case pass == hunkExact && !droppedBlank:
		return ""
	case pass == hunkExact:
		return "without its blank last line"
	case droppedBlank:
		return pass.String() + ", without its blank last line"
	}
	return pass.String()
}

// splice returns lines with lines[i:j] replaced by repl.
func spliceLines(lines []string, i, j int, repl []string) []string {
	out := make([]string, 0, len(lines)-(j-i)+len(repl))
	out = append(out, lines[:i]...)
	out = append(out, repl...)
	return append(out, lines[j:]...)
}
