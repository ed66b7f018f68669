package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// Rule patterns that start with ~ or $HOME name the home of the user the
// host runs as: they are expanded when the file is read (its real path, as
// the gate sees paths), in both forms of the file, for every action but
// bash, whose patterns are command text.
func TestRulePatternsExpandTheHome(t *testing.T) {
	home := t.TempDir()
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		t.Fatal(err)
	}
	real = filepath.ToSlash(real)
	link := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", link) // through a symlink: the rules name the real path
	text := `agents:
  build:
    permission:
      external_directory: { "~/.ssh/*": deny, "$HOME/.aws/**": deny, "~": ask, "/etc/*": ask }
      read: { "~root/x": deny, "src/~/x": deny }
      bash: { "cat ~/.ssh/*": deny }
  other:
    permission:
      - { action: edit, resource: "$HOME/notes/*", effect: deny }
      - { action: bash, resource: "$HOME/bin/*", effect: deny }
`
	f, err := config.Parse("u.yaml", []byte(text), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	resources := func(rs gate.Ruleset) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Action+" "+r.Resource)
		}
		return out
	}
	want := []string{
		"external_directory " + real + "/.ssh/*",
		"external_directory " + real + "/.aws/**",
		"external_directory " + real,
		"external_directory /etc/*",
		"read ~root/x",
		"read src/~/x",
		"bash cat ~/.ssh/*",
	}
	if diff := cmp.Diff(want, resources(f.Agents["build"])); diff != "" {
		t.Errorf("build's rules (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"edit " + real + "/notes/*", "bash $HOME/bin/*"}, resources(f.Agents["other"])); diff != "" {
		t.Errorf("the list form's rules (-want +got):\n%s", diff)
	}
	d := gate.Evaluate("external_directory", real+"/.ssh/*", f.Agents["build"])
	if d.Effect != gate.Deny {
		t.Errorf("external_directory on ~/.ssh: %+v, want denied by the expanded rule", d)
	}
}

// Without a home, a rule that names it is a configuration error at its
// line (the agent is denied everything), never a rule left as written that
// would never match.
func TestRulePatternsWithoutAHome(t *testing.T) {
	t.Setenv("HOME", "")
	if config.Home() != "" {
		t.Fatalf("Home() = %q with HOME unset", config.Home())
	}
	for _, tt := range []struct{ why, text, want string }{
		{"the shorthand form", "agents:\n  build:\n    permission:\n      read: allow\n      external_directory:\n        \"~/.ssh/*\": deny\n",
			`u.yaml:6: agents.build.permission.external_directory.~/.ssh/*: resource "~/.ssh/*" names the home directory, and there is none (HOME is not set or not absolute)`},
		{"the list form", "agents:\n  build:\n    permission:\n      - { action: read, resource: \"$HOME/x\", effect: deny }\n",
			`u.yaml:4: agents.build.permission[0].resource: resource "$HOME/x" names the home directory, and there is none (HOME is not set or not absolute)`},
	} {
		t.Run(tt.why, func(t *testing.T) {
			_, err := config.Parse("u.yaml", []byte(tt.text), gate.SourceUser)
			if err == nil || err.Error() != tt.want || !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("Parse: %v\nwant %s", err, tt.want)
			}
		})
	}
	if _, err := config.Parse("u.yaml", []byte("agents:\n  build:\n    permission:\n      bash: { \"cat ~/x\": deny }\n      read: { \"src/**\": allow }\n"), gate.SourceUser); err != nil {
		t.Errorf("patterns that name no home need none: %v", err)
	}
}
