package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

const specExample = `agents:
  build:
    permission:
      "*": allow
      read: { "*": allow, "*.env": ask, "*.env.*": ask, "*.env.example": allow }
      bash: { "*": ask, "git status *": allow, "go test *": allow }
      edit: ask
      external_directory: ask
`

func TestParseShorthand(t *testing.T) {
	f, err := config.Parse("p.yaml", []byte(specExample), gate.SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	r := func(a, res string, e gate.Effect) gate.Rule {
		return gate.Rule{Action: a, Resource: res, Effect: e, Source: gate.SourceProject}
	}
	want := gate.Ruleset{
		r("*", "*", gate.Allow),
		r("read", "*", gate.Allow), r("read", "*.env", gate.Ask), r("read", "*.env.*", gate.Ask), r("read", "*.env.example", gate.Allow),
		r("bash", "*", gate.Ask), r("bash", "git status *", gate.Allow), r("bash", "go test *", gate.Allow),
		r("edit", "*", gate.Ask),
		r("external_directory", "*", gate.Ask),
	}
	if diff := cmp.Diff(want, f.Agents["build"]); diff != "" {
		t.Errorf("rules in file order (-want +got):\n%s", diff)
	}
}

func TestParseListFormAndJSON(t *testing.T) {
	list := "agents:\n  build:\n    permission:\n      - { action: bash, resource: \"git *\", effect: allow }\n      - { action: bash, resource: \"rm *\", effect: ask, ticket_ttl: 5m }\n"
	f, err := config.Parse("l.yaml", []byte(list), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	want := gate.Ruleset{{Action: "bash", Resource: "git *", Effect: gate.Allow, Source: gate.SourceUser},
		{Action: "bash", Resource: "rm *", Effect: gate.Ask, Source: gate.SourceUser, TicketTTL: "5m"}}
	if diff := cmp.Diff(want, f.Agents["build"]); diff != "" {
		t.Errorf("list form (-want +got):\n%s", diff)
	}
	js := `{"agents": {"build": {"permission": {"edit": "deny"}}}, "tool_output": {"max_lines": 100, "max_bytes": 2048}}`
	f, err = config.Parse("c.json", []byte(js), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	if f.MaxLines != 100 || f.MaxBytes != 2048 || len(f.Agents["build"]) != 1 || f.Agents["build"][0].Effect != gate.Deny {
		t.Errorf("JSON config = %+v", f)
	}
}

func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		why, text, want string
	}{
		{"an unknown top-level key", "agents: {}\nagnets:\n  build: {}\n", "p.yaml:2: agnets: unknown key"},
		{"an unknown agent key", "agents:\n  build:\n    permisson: {}\n", "p.yaml:3: agents.build.permisson: unknown key"},
		{"a bad effect", "agents:\n  build:\n    permission:\n      read: { \"*\": maybe }\n", `p.yaml:4: agents.build.permission.read.*: effect "maybe": want allow, deny or ask`},
		{"a bad effect in the list form", "agents:\n  build:\n    permission:\n      - action: read\n        effect: sometimes\n", `agents.build.permission[0].effect: effect "sometimes"`},
		{"a bad number", "tool_output:\n  max_lines: lots\n", `p.yaml:2: tool_output.max_lines: want a positive whole number, got "lots"`},
		{"an unknown tool_output key", "tool_output:\n  max_files: 3\n", "p.yaml:2: tool_output.max_files: unknown key"},
		{"a bad agent ticket_ttl", "agents:\n  build:\n    ticket_ttl: soon\n", "p.yaml:3: agents.build.ticket_ttl: want a positive duration such as 30m"},
		{"a negative agent ticket_ttl", "agents:\n  build:\n    ticket_ttl: -5m\n", "agents.build.ticket_ttl: want a positive duration"},
		{"not YAML", "agents: [\n", "p.yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := config.Parse("p.yaml", []byte(tt.text), gate.SourceProject)
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("Parse = %v, want ErrInvalid", err)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("error %q does not say %q", got, tt.want)
			}
		})
	}
}

func TestLayers(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	loc := filepath.Join(dir, "project")
	if err := os.MkdirAll(filepath.Join(loc, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The user's file trusts the project: its layer is one like the user's,
	// whose allow overrides the user's ask (an untrusted one only narrows:
	// see trust_test.go).
	write(user, "agents:\n  build:\n    permission:\n      bash: ask\ntool_output: { max_lines: 500 }\ntrusted_projects: ["+strconv.Quote(loc)+"]\n")
	write(config.ProjectFile(loc), "agents:\n  build:\n    permission:\n      bash: { \"go test *\": allow }\n")
	l := config.Loader{UserFile: user}
	eff, err := l.Effective("build", loc)
	if err != nil {
		t.Fatal(err)
	}
	n := len(eff.Rules) - len(eff.Protected) // the protections come last
	got := eff.Rules[n-2 : n]
	want := gate.Ruleset{{Action: "bash", Resource: "*", Effect: gate.Ask, Source: gate.SourceUser},
		{Action: "bash", Resource: "go test *", Effect: gate.Allow, Source: gate.SourceProject}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the user's rules, then the project's, after the built-ins (-want +got):\n%s", diff)
	}
	if eff.Rules[0].Source != gate.SourceDefault || eff.MaxLines != 500 {
		t.Errorf("built-ins first and the user's limit: %+v", eff)
	}
	if d := gate.Evaluate("bash", "go test ./...", eff.Rules); d.Effect != gate.Allow {
		t.Errorf("go test is %s, want allow (the project's rule is the last match)", d.Effect)
	}
	// An agent no layer defines, and a malformed file: deny-all, with an error.
	if eff, err := l.Effective("nobody", loc); err == nil || gate.Evaluate("read", "x", eff.Rules).Effect != gate.Deny {
		t.Errorf("unknown agent: %+v, %v; want deny-all and an error", eff, err)
	}
	write(config.ProjectFile(loc), "agents:\n  build:\n    permission:\n      bash: never\n")
	if eff, err := l.Effective("build", loc); !errors.Is(err, config.ErrInvalid) || gate.Evaluate("read", "x", eff.Rules).Effect != gate.Deny {
		t.Errorf("malformed project file: %+v, %v; want deny-all and ErrInvalid", eff, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(specExample)
	f.Add("agents:\n  build:\n    permission:\n      - { action: bash, resource: \"git *\", effect: allow }\n")
	f.Add(`{"tool_output": {"max_lines": 1}}`)
	f.Add("agents:\n  build:\n    ticket_ttl: 90s\n    permission: { read: ask }\n")
	f.Add("protected_paths:\n  add: [\"secrets/**\"]\n  remove: [\".git/**\"]\n")
	f.Add("trusted_projects: [\"~/src/app\", /srv/app, \"/srv/*\", rel]\n")
	f.Fuzz(func(t *testing.T, text string) {
		file, err := config.Parse("f.yaml", []byte(text), gate.SourceUser)
		if err != nil {
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != "f.yaml" || ce.Line < 1 && ce.Key != "(file)" ||
				!strings.HasPrefix(err.Error(), "f.yaml:"+strconv.Itoa(ce.Line)+": ") {
				t.Fatalf("error %q does not name the file and a line", err)
			}
			return
		}
		for _, pat := range append(file.ProtectAdd, file.ProtectRemove...) {
			if err := gate.CheckPathPattern(pat); err != nil {
				t.Fatalf("accepted a protected path %q: %v", pat, err)
			}
		}
		if _, err := config.Parse("f.yaml", []byte(text), gate.SourceProject); err == nil && len(file.ProtectRemove) > 0 {
			t.Fatalf("a project file removed protected paths %v", file.ProtectRemove)
		}
		for _, rs := range file.Agents {
			for _, r := range rs {
				if !r.Effect.Valid() {
					t.Fatalf("accepted a rule with effect %q", r.Effect)
				}
			}
		}
	})
}

// An agent's ticket_ttl comes from the last layer that sets it, and does
// not by itself define the agent.
func TestAgentTicketTTL(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	loc := filepath.Join(dir, "project")
	if err := os.MkdirAll(filepath.Join(loc, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(user, "agents:\n  build:\n    ticket_ttl: 2h\n  ghost:\n    ticket_ttl: 1m\n")
	l := config.Loader{UserFile: user}
	if eff, err := l.Effective("build", loc); err != nil || eff.TicketTTL != 2*time.Hour {
		t.Errorf("user file: ticket_ttl %v, %v; want 2h", eff.TicketTTL, err)
	}
	write(config.ProjectFile(loc), "agents:\n  build:\n    ticket_ttl: 15m\n")
	if eff, err := l.Effective("build", loc); err != nil || eff.TicketTTL != 15*time.Minute {
		t.Errorf("project file after the user's: ticket_ttl %v, %v; want 15m", eff.TicketTTL, err)
	}
	if eff, err := l.Effective("ghost", loc); err == nil || gate.Evaluate("read", "x", eff.Rules).Effect != gate.Deny {
		t.Errorf("an agent with a ticket_ttl and no rules: %+v, %v; want deny-all and an error", eff, err)
	}
}
