package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/gate"
)

func TestParseProtectedPaths(t *testing.T) {
	text := "protected_paths:\n  add: [\"secrets/**\", \"/Makefile\"]\n  remove: [\".git/**\"]\n"
	f, err := config.Parse("u.yaml", []byte(text), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"secrets/**", "/Makefile"}, f.ProtectAdd); diff != "" {
		t.Errorf("add (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{".git/**"}, f.ProtectRemove); diff != "" {
		t.Errorf("remove (-want +got):\n%s", diff)
	}
	tests := []struct {
		why, text, want string
		source          gate.Source
	}{
		{"a project file removing", "agents: {}\nprotected_paths:\n  remove: [\".git/**\"]\n", "p.yaml:3: protected_paths.remove: only the user's file may remove a protected path (this is a project config file)", gate.SourceProject},
		{"a bad pattern", "protected_paths:\n  add:\n    - ok/**\n    - \"a//b\"\n", `p.yaml:4: protected_paths.add[1]: bad protected-path pattern "a//b": an empty segment`, gate.SourceUser},
		{"a . segment", "protected_paths: { add: [\"./x\"] }\n", `protected_paths.add[0]: bad protected-path pattern "./x"`, gate.SourceUser},
		{"not a list", "protected_paths:\n  add: secrets/**\n", "p.yaml:2: protected_paths.add: want a list of path patterns", gate.SourceUser},
		{"an unknown key", "protected_paths:\n  except: []\n", "p.yaml:2: protected_paths.except: unknown key (want add or remove)", gate.SourceUser},
		{"removing what is not a default", "protected_paths:\n  remove:\n    - .git/config\n", `p.yaml:3: protected_paths.remove[0]: ".git/config" is not protected by default (the defaults are .stepgate/**, .git/**)`, gate.SourceUser},
		{"a mapping in the list", "protected_paths:\n  add: [{a: b}]\n", "protected_paths.add[0]: want a path pattern", gate.SourceUser},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := config.Parse("p.yaml", []byte(tt.text), tt.source)
			if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
}

// fixture is a user file and a location with a project file.
type fixture struct {
	t         *testing.T
	user, loc string
	l         config.Loader
}

func newFixture(t *testing.T, user, project string) *fixture {
	t.Helper()
	dir := t.TempDir()
	fx := &fixture{t: t, user: filepath.Join(dir, "user.yaml"), loc: filepath.Join(dir, "project")}
	if err := os.MkdirAll(filepath.Join(fx.loc, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	fx.write(fx.user, user)
	fx.write(config.ProjectFile(fx.loc), project)
	fx.l = config.Loader{UserFile: fx.user}
	return fx
}

func (fx *fixture) write(p, s string) {
	fx.t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		fx.t.Fatal(err)
	}
}

// decide is the verdict on writing path in the fixture's location.
func decide(eff config.Effective, path string) gate.Verdict {
	return gate.Decide(gate.Configured, []descriptor.Request{{Action: "edit", Resources: []string{path}, Save: []string{"*"}}}, eff.Rules, nil)
}

func TestProtectedPathLayers(t *testing.T) {
	allowEdit := "agents:\n  build:\n    permission:\n      edit: allow\n"
	tests := []struct {
		why, user, project string
		confirm, allow     []string
	}{
		{"the defaults under edit: allow", allowEdit, "",
			[]string{".stepgate/config.yaml", ".git/config", ".git/hooks/pre-commit", ".git", ".Git/Config", "sub/.git/hooks/post-checkout"},
			[]string{"src/main.go", ".gitignore", "stepgate/config.yaml"}},
		{"the user adds", allowEdit + "protected_paths:\n  add: [\".agents/skills/**\", \"/Makefile\"]\n", "",
			[]string{".agents/skills/x/SKILL.md", "Makefile", ".git/config"}, []string{"sub/Makefile"}},
		{"the user removes a default", allowEdit + "protected_paths:\n  remove: [\".git/**\"]\n", "",
			[]string{".stepgate/config.yaml"}, []string{".git/config", ".git/hooks/pre-commit"}},
		{"the user removes a default a project adds back", allowEdit + "protected_paths:\n  remove: [\".git/**\"]\n", "protected_paths:\n  add: [\".git/**\"]\n",
			[]string{".git/config"}, nil},
		{"the user removes and adds back a part", allowEdit + "protected_paths:\n  remove: [\".git/**\"]\n  add: [\".git/hooks/**\"]\n", "",
			[]string{".git/hooks/pre-commit"}, []string{".git/config"}},
		{"a project file adds", allowEdit, "protected_paths:\n  add: [\"deploy/**\"]\n",
			[]string{"deploy/prod.yaml", ".git/config"}, []string{"src/a.go"}},
		{"a project rule allowing edits of .git does not lift the protection", allowEdit, "agents:\n  build:\n    permission:\n      edit: { \".git/*\": allow, \".stepgate/*\": allow }\n",
			[]string{".git/config", ".stepgate/config.yaml"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			fx := newFixture(t, tt.user, tt.project)
			eff, err := fx.l.Effective("build", fx.loc)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tt.confirm {
				if v := decide(eff, p); v.Kind != gate.KindConfirm || !strings.Contains(v.Reason, "(protected path)") {
					t.Errorf("write %s: %s (%s), want a confirmation for a protected path", p, v.Kind, v.Reason)
				}
			}
			for _, p := range tt.allow {
				if v := decide(eff, p); v.Kind != gate.KindAllow {
					t.Errorf("write %s: %s (%s), want allow", p, v.Kind, v.Reason)
				}
			}
		})
	}
}

func TestProjectFileCannotRemoveProtection(t *testing.T) {
	fx := newFixture(t, "agents:\n  build:\n    permission:\n      edit: allow\n",
		"agents:\n  build:\n    permission:\n      bash: allow\nprotected_paths:\n  remove: [\".stepgate/**\", \".git/**\"]\n")
	eff, err := fx.l.Effective("build", fx.loc)
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "config.yaml:6: protected_paths.remove: only the user's file may remove") {
		t.Fatalf("Effective = %v, want the project file's line 6 refused", err)
	}
	if v := decide(eff, "src/a.go"); v.Kind != gate.KindBlock {
		t.Errorf("with a project file that tries: %s, want the agent denied everything", v.Kind)
	}
}

// The user's own file is protected whatever it says, also when the location
// holds it, and through a symlink to it.
func TestUserFileIsAlwaysProtected(t *testing.T) {
	home := t.TempDir()
	user := filepath.Join(home, ".config", "stepgate", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	text := "agents:\n  build:\n    permission:\n      \"*\": allow\n      edit: allow\nprotected_paths:\n  remove: [\".stepgate/**\", \".git/**\"]\n"
	if err := os.WriteFile(user, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	l := config.Loader{UserFile: user}
	eff, err := l.Effective("build", home)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{user, ".config/stepgate/config.yaml", ".config/Stepgate/CONFIG.yaml"} {
		if v := decide(eff, p); v.Kind != gate.KindConfirm {
			t.Errorf("write %s: %s (%s), want a confirmation", p, v.Kind, v.Reason)
		}
	}
	if v := decide(eff, ".git/config"); v.Kind != gate.KindAllow {
		t.Errorf("the user removed .git/**: %s, want allow", v.Kind)
	}
	// A directory whose name starts with ".." is inside the location all the
	// same: the file is protected by its relative path there too.
	dotted := filepath.Join(home, "..cfg", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(dotted), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dotted, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	eff, err = config.Loader{UserFile: dotted}.Effective("build", home)
	if err != nil {
		t.Fatal(err)
	}
	if v := decide(eff, "..cfg/config.yaml"); v.Kind != gate.KindConfirm {
		t.Errorf("write ..cfg/config.yaml, the user file: %s (%s), want a confirmation", v.Kind, v.Reason)
	}
}

func TestSymlinkedProjectFileIsRefused(t *testing.T) {
	fx := newFixture(t, "agents:\n  build:\n    permission:\n      bash: ask\n", "")
	if err := os.RemoveAll(filepath.Join(fx.loc, ".stepgate")); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(fx.loc, "notes")
	if err := os.MkdirAll(evil, 0o700); err != nil {
		t.Fatal(err)
	}
	fx.write(filepath.Join(evil, "config.yaml"), "agents:\n  build:\n    permission:\n      bash: allow\n")
	if err := os.Symlink("notes", filepath.Join(fx.loc, ".stepgate")); err != nil {
		t.Fatal(err)
	}
	eff, err := fx.l.Effective("build", fx.loc)
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), ".stepgate is a symbolic link") {
		t.Fatalf("Effective = %v, want the link refused", err)
	}
	if d := gate.Evaluate("bash", "ls", eff.Rules); d.Effect != gate.Deny {
		t.Errorf("bash through a linked project file: %s, want deny", d.Effect)
	}
}
