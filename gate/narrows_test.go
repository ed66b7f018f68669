package gate

import (
	"testing"

	"pgregory.net/rapid"
)

func TestNarrows(t *testing.T) {
	tests := []struct {
		why  string
		p, s string
		want bool
	}{
		{"the pattern itself", "src/*", "src/*", true},
		{"a file of the directory", "src/main.go", "src/*", true},
		{"a subdirectory", "src/api/*", "src/*", true},
		{"the whole project instead of a directory", "*", "src/*", false},
		{"a sibling directory", "test/*", "src/*", false},
		{"a literal the pattern does not match", "rm -rf /", "rm -rf build", false},
		{"one command of a prefix", "git status --short", "git status *", true},
		{"the bare command of the optional tail", "git status", "git status *", true},
		{"a narrower optional tail", "git status -s *", "git status *", true},
		{"a star glued to the command", "git status*", "git status *", false},
		{"a literal under a literal", "rm -rf build/x", "rm -rf build", false},
		{"a star where the save pattern has none", "rm -rf build*", "rm -rf build", false},
		{"a wildcard inside", "src/*/x.go", "src/*", false},
		{"a question mark", "src/?.go", "src/*", false},
		{"everything under everything", "*", "*", true},
		{"a directory under a double star", "src/a/**", "src/**", true},
	}
	for _, tt := range tests {
		if got := Narrows(tt.p, tt.s); got != tt.want {
			t.Errorf("%s: Narrows(%q, %q) = %v, want %v", tt.why, tt.p, tt.s, got, tt.want)
		}
	}
}

// Whatever p Narrows accepts for s, every resource p matches s matches.
func TestNarrowsIsSound(t *testing.T) {
	alphabet := rapid.SampledFrom([]rune{'a', 'b', '/', ' ', '*', '?', '.'})
	str := rapid.StringOfN(alphabet, 0, 8, -1)
	rapid.Check(t, func(t *rapid.T) {
		p, s, r := str.Draw(t, "p"), str.Draw(t, "s"), str.Draw(t, "resource")
		if Narrows(p, s) && Match(p, r) && !Match(s, r) {
			t.Fatalf("Narrows(%q, %q), and %q matches the first only", p, s, r)
		}
	})
}

// FuzzNarrows: the same soundness for any strings.
func FuzzNarrows(f *testing.F) {
	f.Add("src/api/*", "src/*", "src/api/x.go")
	f.Add("git status *", "git status *", "git status")
	f.Add("git status", "git status *", "git statusx")
	f.Fuzz(func(t *testing.T, p, s, r string) {
		if Narrows(p, s) && Match(p, r) && !Match(s, r) {
			t.Fatalf("Narrows(%q, %q), and %q matches the first only", p, s, r)
		}
	})
}
