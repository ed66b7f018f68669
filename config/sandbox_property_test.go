package config_test

import (
	"testing"

	"github.com/stepgate/stepgate/config"
	"pgregory.net/rapid"
)

// genProfile draws a sandbox profile from small alphabets, so that two
// often share hosts, roots and paths; each field is sometimes not set.
func genProfile() *rapid.Generator[config.SandboxProfile] {
	list := func(t *rapid.T, label string, from []string) []string {
		if rapid.IntRange(0, 3).Draw(t, label+" unset") == 0 {
			return nil
		}
		return rapid.SliceOfDistinct(rapid.SampledFrom(from), rapid.ID[string]).Draw(t, label)
	}
	return rapid.Custom(func(t *rapid.T) config.SandboxProfile {
		return config.SandboxProfile{
			// (weighted towards the modes and the network whose lists matter)
			Mode:     rapid.SampledFrom([]string{"", config.SandboxOff, config.SandboxWorkspaceWrite, config.SandboxWorkspaceWrite, config.SandboxReadOnly}).Draw(t, "mode"),
			Network:  rapid.SampledFrom([]string{"", config.NetworkOff, config.NetworkProxy, config.NetworkProxy, config.NetworkHost}).Draw(t, "network"),
			Allow:    list(t, "allow", []string{"a.test:443", "b.test:443", "*.c.test:443", "a.test:80"}),
			Writable: list(t, "writable", []string{"/w1", "/w2", "/w3"}),
			Denied:   list(t, "denied", []string{"/d1", "/d2", "/home/u/.ssh"}),
			ReadOnly: list(t, "read_only", []string{"/r1", "/r2"}),
			Escalate: rapid.SampledFrom([]string{"", config.EscalateOff, config.EscalateAsk}).Draw(t, "escalate"),
		}
	})
}

// Tightening never loosens: p tightened by q allows nothing p does not
// and nothing q does not — no host either forbids, no root either keeps
// from writing, no path either denies. So neither a project's file that
// only narrows nor the host's --sandbox floor can be undone by the other
// layer.
func TestTightenNeverLoosens(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, q := genProfile().Draw(t, "p"), genProfile().Draw(t, "q")
		r := p.Tighten(q)
		if !r.AtLeastAsStrict(p) {
			t.Fatalf("%+v tightened by %+v is %+v: looser than the first", p, q, r)
		}
		if !r.AtLeastAsStrict(q) {
			t.Fatalf("%+v tightened by %+v is %+v: looser than the second", p, q, r)
		}
	})
}

// Strictness is a preorder (every profile is as strict as itself, and it
// composes), and tightening by a profile one is already as strict as
// changes nothing one can tell.
func TestStrictnessIsAPreorder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p, q, r := genProfile().Draw(t, "p"), genProfile().Draw(t, "q"), genProfile().Draw(t, "r")
		if !p.AtLeastAsStrict(p) {
			t.Fatalf("%+v is not as strict as itself", p)
		}
		if p.AtLeastAsStrict(q) && q.AtLeastAsStrict(r) && !p.AtLeastAsStrict(r) {
			t.Fatalf("not transitive: %+v ≥ %+v ≥ %+v", p, q, r)
		}
		if p.AtLeastAsStrict(q) {
			if tp := p.Tighten(q); !p.AtLeastAsStrict(tp) {
				t.Fatalf("%+v tightened by the looser %+v became %+v, stricter than it was", p, q, tp)
			}
		}
	})
}
