package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
)

// The sandbox section of a user's file, for every agent and for one: an
// agent's own section goes over the shared one, and denied paths add up.
func TestSandboxSection(t *testing.T) {
	s := newTrustSetup(t, `sandbox:
  mode: workspace-write
  network: proxy
  allow: ["GitHub.com:443", "*.pypi.org:443"]
  writable: [/var/cache/build]
  denied: [/srv/secrets]
agents:
  build:
    permission: { "*": allow }
  reviewer:
    permission: { read: allow }
    sandbox: { mode: read-only, denied: [/srv/other] }
`, "")
	build, err := s.l.Effective("build", s.loc)
	if err != nil {
		t.Fatal(err)
	}
	want := config.SandboxProfile{Mode: "workspace-write", Network: "proxy", Allow: []string{"github.com:443", "*.pypi.org:443"}, Writable: []string{"/var/cache/build"}, Denied: []string{"/srv/secrets"}}
	if !equalProfile(build.Sandbox, want) {
		t.Errorf("build's sandbox: %+v, want %+v", build.Sandbox, want)
	}
	rev, err := s.l.Effective("reviewer", s.loc)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Sandbox.Mode != "read-only" || !slices.Equal(rev.Sandbox.Denied, []string{"/srv/secrets", "/srv/other"}) {
		t.Errorf("reviewer's sandbox: %+v, want read-only and both denied paths", rev.Sandbox)
	}
}

// A project's file only tightens the sandbox unless the user's file
// trusts it: it cannot turn it off, open the network, add a host or a
// writable root; it can deny more and make it stricter. A trusted project
// layers like the user's.
func TestProjectFileOnlyTightensTheSandbox(t *testing.T) {
	const user = "sandbox: { mode: workspace-write, network: proxy, allow: [\"a.test:443\"], writable: [/w] }\nagents:\n  build:\n    permission: { \"*\": allow }\n"
	tests := []struct {
		why, project string
		want         config.SandboxProfile
	}{
		{"turning it off", "sandbox: { mode: off }\n", config.SandboxProfile{Mode: "workspace-write", Network: "proxy", Allow: []string{"a.test:443"}, Writable: []string{"/w"}}},
		{"the host's network", "sandbox: { network: host }\n", config.SandboxProfile{Mode: "workspace-write", Network: "proxy", Allow: []string{"a.test:443"}, Writable: []string{"/w"}}},
		{"another host and root", "sandbox: { allow: [\"a.test:443\", \"evil.test:443\"], writable: [/w, /etc] }\n", config.SandboxProfile{Mode: "workspace-write", Network: "proxy", Allow: []string{"a.test:443"}, Writable: []string{"/w"}}},
		{"an agent's own", "agents:\n  build:\n    sandbox: { mode: off }\n", config.SandboxProfile{Mode: "workspace-write", Network: "proxy", Allow: []string{"a.test:443"}, Writable: []string{"/w"}}},
		{"stricter", "sandbox: { mode: read-only, network: off, denied: [/d] }\n", config.SandboxProfile{Mode: "read-only", Network: "off", Denied: []string{"/d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			s := newTrustSetup(t, user, tt.project)
			e, err := s.l.Effective("build", s.loc)
			if err != nil {
				t.Fatal(err)
			}
			if !equalProfile(e.Sandbox, tt.want) {
				t.Errorf("sandbox %+v, want %+v", e.Sandbox, tt.want)
			}
		})
	}
	s := newTrustSetup(t, "", "sandbox: { mode: off }\n")
	s.write(t, s.user, user+"trusted_projects: ["+s.loc+"]\n")
	e, err := s.l.Effective("build", s.loc)
	if err != nil {
		t.Fatal(err)
	}
	if e.Sandbox.Sandboxed() {
		t.Errorf("a trusted project's mode off: %+v, want it off", e.Sandbox)
	}
}

// Bad sandbox values are errors at their line and key, never ignored.
func TestSandboxSectionRefusesBadValues(t *testing.T) {
	tests := []struct{ text, want string }{
		{"sandbox: { mode: strict }\n", `:1: sandbox.mode: "strict": want off, workspace-write or read-only`},
		{"sandbox: { mode: read-only, network: wifi }\n", `:1: sandbox.network: "wifi": want off, proxy or host`},
		{"sandbox:\n  mode: off\n  network: proxy\n", `:2: sandbox: network "proxy" needs a sandbox: mode is off`},
		{"sandbox: { allow: [\"example.com\"] }\n", `:1: sandbox.allow[0]: "example.com": want host:port`},
		{"sandbox: { allow: [\"example.com:99999\"] }\n", `:1: sandbox.allow[0]: "example.com:99999": want host:port`},
		{"sandbox: { writable: [build] }\n", `:1: sandbox.writable[0]: "build": want an absolute path`},
		{"sandbox: { denied: [\"/srv/*\"] }\n", `:1: sandbox.denied[0]: "/srv/*": want a path, without wildcards`},
		{"sandbox: { tmpfs: true }\n", `:1: sandbox.tmpfs: unknown key`},
	}
	for _, tt := range tests {
		_, err := config.Parse("user.yaml", []byte(tt.text), "user")
		var cerr *config.Error
		if !errors.As(err, &cerr) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error containing %q", tt.text, err, tt.want)
		}
	}
}

func equalProfile(a, b config.SandboxProfile) bool {
	norm := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	return a.Mode == b.Mode && a.Net() == b.Net() && slices.Equal(norm(a.Allow), norm(b.Allow)) &&
		slices.Equal(norm(a.Writable), norm(b.Writable)) && slices.Equal(norm(a.Denied), norm(b.Denied)) && slices.Equal(norm(a.ReadOnly), norm(b.ReadOnly)) &&
		a.Escalate == b.Escalate
}

// Escalation (a call the sandbox refused asks to run outside it) is the
// user's file's to turn on, for every agent or one; a project file may
// turn it off, trusted or not, and one that says ask is refused at its
// line whether the user's file trusts it or not.
func TestEscalationIsTheUsersFileOnly(t *testing.T) {
	const user = "sandbox: { mode: workspace-write, escalate: ask }\nagents:\n  build:\n    permission: { \"*\": allow }\n  review:\n    permission: { \"*\": allow }\n    sandbox: { escalate: off }\n"
	s := newTrustSetup(t, user, "")
	build, err := s.l.Effective("build", s.loc)
	if err != nil {
		t.Fatal(err)
	}
	review, err := s.l.Effective("review", s.loc)
	if err != nil {
		t.Fatal(err)
	}
	if !build.Sandbox.Escalates() || review.Sandbox.Escalates() {
		t.Errorf("build escalates %v (%+v), review %v (%+v): want build only", build.Sandbox.Escalates(), build.Sandbox, review.Sandbox.Escalates(), review.Sandbox)
	}
	for _, trusted := range []bool{false, true} {
		text := user
		if trusted {
			text += "trusted_projects: [" + s.loc + "]\n"
		}
		s.write(t, s.user, text)
		s.write(t, config.ProjectFile(s.loc), "sandbox: { escalate: off }\n")
		e, err := s.l.Effective("build", s.loc)
		if err != nil {
			t.Fatal(err)
		}
		if e.Sandbox.Escalates() {
			t.Errorf("trusted %v: the project's escalate: off left %+v escalating", trusted, e.Sandbox)
		}
		s.write(t, s.user, strings.Replace(text, "escalate: ask", "escalate: off", 1))
		s.write(t, config.ProjectFile(s.loc), "agents:\n  build:\n    sandbox:\n      escalate: ask\n")
		e, err = s.l.Effective("build", s.loc)
		if err == nil || !strings.Contains(err.Error(), ":4: agents.build.sandbox.escalate: ask is the user's file's only") {
			t.Errorf("trusted %v: a project's escalate: ask gave %v (escalates %v), want the error at its line", trusted, err, e.Sandbox.Escalates())
		}
	}
	if _, err := config.Parse("user.yaml", []byte("sandbox: { escalate: maybe }\n"), "user"); err == nil || !strings.Contains(err.Error(), `"maybe": want off or ask`) {
		t.Errorf("escalate: maybe: %v, want off or ask", err)
	}
}
