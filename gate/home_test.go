package gate

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestExpandHome(t *testing.T) {
	tests := []struct {
		why, pattern, home, want string
		ok                       bool
	}{
		{"~ alone", "~", "/home/me", "/home/me", true},
		{"~/ and a path", "~/.ssh/*", "/home/me", "/home/me/.ssh/*", true},
		{"$HOME alone", "$HOME", "/home/me", "/home/me", true},
		{"$HOME/ and a path", "$HOME/.aws/**", "/home/me", "/home/me/.aws/**", true},
		{"a backslash after ~", `~\.ssh\*`, "/home/me", `/home/me\.ssh\*`, true},
		{"a home with a trailing slash", "~/x", "/home/me/", "/home/me/x", true},
		{"the home is the root", "~/x", "/", "/x", true},
		{"the home is the root, ~ alone", "~", "/", "/", true},
		{"~user stays literal", "~root/.ssh/*", "/home/me", "~root/.ssh/*", true},
		{"${HOME} stays literal", "${HOME}/x", "/home/me", "${HOME}/x", true},
		{"$HOMEDIR stays literal", "$HOMEDIR/x", "/home/me", "$HOMEDIR/x", true},
		{"a ~ later stays literal", "*/~/x", "/home/me", "*/~/x", true},
		{"no reference, no home needed", "src/**", "", "src/**", true},
		{"a reference without a home", "~/.ssh/*", "", "~/.ssh/*", false},
		{"a reference with a relative home", "$HOME/x", "me", "$HOME/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got, ok := ExpandHome(tt.pattern, tt.home)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ExpandHome(%q, %q) = %q, %v; want %q, %v", tt.pattern, tt.home, got, ok, tt.want, tt.ok)
			}
		})
	}
	if HomeAction("bash") || !HomeAction("read") || !HomeAction("external_directory") || !HomeAction("*") {
		t.Errorf("HomeAction: only bash keeps its patterns as written")
	}
}

// Expanding is done once: an expanded pattern names no home; "~" and
// "$HOME" expand alike; a pattern without a reference is untouched; and
// the expanded rule matches the home's paths as the reference names them.
func TestExpandHomeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		home := "/" + rapid.StringOfN(rapid.RuneFrom([]rune("ab/")), 0, 6, -1).Draw(t, "home")
		rest := rapid.StringOfN(rapid.RuneFrom([]rune("ab/*?~$")), 0, 8, -1).Draw(t, "rest")
		for _, ref := range []string{"~", "$HOME"} {
			p := ref + "/" + rest
			got, ok := ExpandHome(p, home)
			if !ok {
				t.Fatalf("ExpandHome(%q, %q) refused", p, home)
			}
			if _, again := HomeRef(got); again {
				t.Fatalf("ExpandHome(%q, %q) = %q still names the home", p, home, got)
			}
			if tilde, _ := ExpandHome("~/"+rest, home); tilde != got {
				t.Fatalf("~ and $HOME expand differently: %q, %q", tilde, got)
			}
			if s := strings.TrimRight(home, "/") + "/" + rest; !Match(got, s) {
				t.Fatalf("Match(%q, %q) = false: the expansion does not match the home path it names", got, s)
			}
		}
		if _, ref := HomeRef(rest); !ref {
			if got, ok := ExpandHome(rest, home); got != rest || !ok {
				t.Fatalf("ExpandHome(%q) = %q, %v: a pattern without a reference changed", rest, got, ok)
			}
		}
	})
}
