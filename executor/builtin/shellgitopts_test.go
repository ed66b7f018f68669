package builtin

import (
	"slices"
	"strings"
	"testing"
)

// FuzzGitOptions: the option and repository judges never panic on any
// words, and every option of gitOptions asks, written --name=v, --name v,
// abbreviated to any prefix, as its short letter with the value attached or
// next, and bundled after another flag, wherever it comes among other
// words.
func FuzzGitOptions(f *testing.F) {
	for _, s := range []struct {
		sub, line string
	}{
		{"clone", "-c core.sshCommand=x ssh://h/r"},
		{"push", "--repo ./fake origin main"},
		{"rebase", "-i HEAD~2"},
		{"log", "--oneline -p --"},
		{"merge", "-m -s -sours"},
		{"fetch", "-o"},
	} {
		f.Add(s.sub, s.line, uint8(0), uint8(3))
	}
	f.Fuzz(func(t *testing.T, sub, line string, oi, n uint8) {
		words := strings.Fields(line)
		gitOptionAsk(sub, words)
		gitRepoArgs(sub, words)
		o := gitOptions[int(oi)%len(gitOptions)]
		if !o.of(sub) {
			sub = o.subs[int(n)%len(o.subs)]
			if sub == "*" {
				sub = "log"
			}
		}
		long := o.long[int(n)%len(o.long)]
		name := long[:1+int(n)%len(long)]
		forms := [][]string{{"--" + name + "=evil"}, {"--" + name, "evil"}}
		if slices.Contains(gitExactSafe, name) {
			forms = nil
		}
		if o.short != 0 {
			c := string(o.short)
			forms = append(forms, []string{"-" + c + "evil"}, []string{"-" + c, "evil"}, []string{"-q" + c, "evil"})
		}
		for _, form := range forms {
			args := append(slices.Clone(words), form...)
			if gitOptionAsk(sub, args) == "" {
				t.Fatalf("git %s %q: no ask", sub, args)
			}
		}
	})
}
