package builtin

import (
	"fmt"
	"strings"
)

// heredocCommands are the command words a heredoc opener may follow: cat,
// as opencode's models write it, and apply_patch, as codex's write the shell
// command.
var heredocCommands = [...]string{"cat", "apply_patch", "applypatch"}

// unwrapHeredoc returns the range of lines[first:last] inside a heredoc
// when the range is one: a first line <<WORD, <<'WORD' or <<"WORD"
// (optionally after a command word of heredocCommands; surrounding spaces
// ignored), a last line WORD alone, and the patch between them. A first line
// holding << that is not such an opener, or a heredoc that does not end with
// its word, is an error; a range that opens no heredoc is returned as it is.
func unwrapHeredoc(lines []string, first, last int) (int, int, error) {
	opener := strings.TrimSpace(lines[first])
	word, ok := heredocWord(opener)
	if !ok {
		if strings.Contains(opener, "<<") {
			return 0, 0, fmt.Errorf("line %d: %q: a heredoc around the patch opens with <<EOF, <<'EOF' or <<\"EOF\", alone or after cat or apply_patch", first+1, opener)
		}
		return first, last, nil
	}
	if last-first < 2 || strings.TrimSpace(lines[last-1]) != word {
		return 0, 0, fmt.Errorf("line %d: the heredoc opened on line %d ends with a line %s alone", last, first+1, word)
	}
	f, l := trimBlank(lines, first+1, last-1)
	if f == l {
		return 0, 0, fmt.Errorf("line %d: the heredoc holds no patch", first+2)
	}
	return f, l, nil
}

// heredocWord returns the delimiter word of a heredoc opener line.
func heredocWord(line string) (string, bool) {
	for _, cmd := range heredocCommands {
		if rest, ok := strings.CutPrefix(line, cmd); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimLeft(rest, " \t")
			break
		}
	}
	word, ok := strings.CutPrefix(line, "<<")
	if !ok {
		return "", false
	}
	word = strings.TrimLeft(word, " \t")
	if n := len(word); n >= 2 && (word[0] == '\'' || word[0] == '"') && word[n-1] == word[0] {
		word = word[1 : n-1]
	}
	if word == "" {
		return "", false
	}
	for _, r := range word {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return "", false
		}
	}
	return word, true
}
