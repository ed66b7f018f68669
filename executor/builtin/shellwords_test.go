package builtin

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// wordTokens build the words FuzzLiteral tries: quoting, escapes and what
// bash expands. With two letters and no PATH nothing they form can run.
var wordTokens = []string{"a", "b", "-", "\\", "'", "\"", "$", "`", " ", "\n", "{", "}", ",", "..", "*", "?", "[", "]", "~", "=", "#", "$'", "$\"", "!", "\t", "/", "@("}

// FuzzLiteral asserts that a word literal calls fixed is what bash makes
// of it: printf prints the word bash passes it.
func FuzzLiteral(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash is not installed")
	}
	for _, s := range []string{"\x00", "\x04\x00\x04", "\x05\x03\x05\x00\x05", "\x03\x09\x00", "\x0a\x00\x0c\x01\x0b", "\x12\x00", "\x04\x03\x04\x04", "\x15\x00\x04"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var w strings.Builder
		for i, c := range data {
			if i == 16 {
				break
			}
			w.WriteString(wordTokens[int(c)%len(wordTokens)])
		}
		command := "printf '%s\\0' " + w.String()
		file, err := parseShell(command, syntax.LangBash)
		if err != nil || len(file.Stmts) != 1 {
			return
		}
		call, ok := file.Stmts[0].Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) != 3 || len(call.Assigns) != 0 || len(file.Stmts[0].Redirs) != 0 {
			return
		}
		want, ok := literal(call.Args[2])
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", command)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + cmd.Dir}
		out, err := cmd.Output()
		if err != nil {
			return // bash refused what the parser took
		}
		if got := strings.TrimSuffix(string(out), "\x00"); got != want || strings.Count(string(out), "\x00") != 1 {
			t.Fatalf("word %q: literal says %q, bash passes %q", w.String(), want, out)
		}
	})
}
