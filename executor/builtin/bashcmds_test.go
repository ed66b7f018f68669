package builtin_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

func TestSimpleCommands(t *testing.T) {
	tests := []struct {
		why, in string
		want    []string
		parsed  bool
	}{
		{"one command", "git status", []string{"git status"}, true},
		{"a list", "git status; rm -rf x", []string{"git status", "rm -rf x"}, true},
		{"and, pipe", "git log && curl x | sh", []string{"git log", "curl x", "sh"}, true},
		{"command substitution", "git $(rm -rf x)", []string{"git $(rm -rf x)", "rm -rf x"}, true},
		{"process substitution in a redirect", "echo ok > >(rm x)", []string{"echo ok", "rm x"}, true},
		{"a subshell", "(cd /tmp && make)", []string{"cd /tmp", "make"}, true},
		{"a function body", "f() { rm -rf /; }; f", []string{"rm -rf /", "f"}, true},
		{"backquotes", "echo `whoami`", []string{"echo `whoami`", "whoami"}, true},
		{"declarations", "export X=$(id)", []string{"export X=$(id)", "id"}, true},
		{"does not parse", "if then fi (((", []string{"if then fi ((("}, false},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			got, parsed := builtin.SimpleCommands(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" || parsed != tt.parsed {
				t.Errorf("SimpleCommands(%q) parsed=%v (-want +got):\n%s", tt.in, parsed, diff)
			}
		})
	}
}

// With bash: {"*": ask, "git *": allow}, git status is allowed and every
// command that hides another asks.
func TestBashPermissions(t *testing.T) {
	rules := gate.Ruleset{
		{Action: "bash", Resource: "*", Effect: gate.Ask, Source: gate.SourceProject},
		{Action: "bash", Resource: "git *", Effect: gate.Allow, Source: gate.SourceProject},
	}
	verdict := func(command string) gate.Verdict {
		cmds, parsed := builtin.SimpleCommands(command)
		return gate.Decide(gate.Configured, []descriptor.Request{{Action: "bash", Resources: cmds, Save: cmds, Ask: !parsed}}, rules, nil)
	}
	if v := verdict("git status"); v.Kind != gate.KindAllow {
		t.Errorf("git status: %s", v.Kind)
	}
	// The ticket lists exactly the simple commands no rule allows.
	for c, offending := range map[string][]string{
		"git status; rm -rf x":   {"rm -rf x"},
		"git log && curl x | sh": {"curl x", "sh"},
		"git $(rm -rf x)":        {"rm -rf x"},
		"echo ok > >(rm x)":      {"echo ok", "rm x"},
		"git ((( broken":         {"git ((( broken"},
	} {
		v := verdict(c)
		if v.Kind != gate.KindConfirm {
			t.Errorf("%q: %s, want confirm", c, v.Kind)
			continue
		}
		var asked, saves []string
		for _, r := range v.Asked {
			asked, saves = append(asked, r.Resources...), append(saves, r.Save...)
		}
		if diff := cmp.Diff(offending, asked); diff != "" {
			t.Errorf("%q: the ticket asks about (-want +got):\n%s", c, diff)
		}
		if diff := cmp.Diff(offending, saves); diff != "" {
			t.Errorf("%q: \"always\" would save (-want +got):\n%s", c, diff)
		}
	}
}

func FuzzSimpleCommands(f *testing.F) {
	for _, s := range []string{"git status", "a; b", "$(x) `y` <(z)", "f() { g; }", "if then", "'", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, command string) {
		cmds, _ := builtin.SimpleCommands(command)
		for _, c := range cmds {
			if c == "" {
				t.Fatalf("an empty command from %q", command)
			}
		}
	})
}
