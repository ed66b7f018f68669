package gate

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exploreRules is the read-only explore agent of the spec: deny everything,
// then allow the read-only tools.
func exploreRules() Ruleset {
	rs := DenyAllRules(SourceDefault)
	for _, a := range []string{"read", "glob", "grep", "webfetch", "websearch"} {
		rs = append(rs, Rule{Action: a, Resource: "*", Effect: Allow, Source: SourceDefault})
	}
	return rs
}

func TestWhollyDenied(t *testing.T) {
	tests := []struct {
		why    string
		action string
		rules  Ruleset
		want   bool
	}{
		{"explore hides bash", "bash", exploreRules(), true},
		{"explore hides edit", "edit", exploreRules(), true},
		{"explore keeps read", "read", exploreRules(), false},
		{"build hides nothing", "bash", buildDefaults(), false},
		{"a deny of some resources does not hide the tool", "bash", configured(), false},
		{"the last rule for the action decides", "read",
			Ruleset{{Action: "read", Resource: "*", Effect: Allow}, {Action: "re*", Resource: "*", Effect: Deny}}, true},
		{"a later narrower rule keeps the tool visible", "read",
			Ruleset{{Action: "*", Resource: "*", Effect: Deny}, {Action: "read", Resource: "*.md", Effect: Allow}}, false},
		{"a later narrower deny still keeps it visible", "read",
			Ruleset{{Action: "*", Resource: "*", Effect: Deny}, {Action: "read", Resource: "*.md", Effect: Deny}}, false},
		{"** is every resource too", "bash", Ruleset{{Action: "bash", Resource: "**", Effect: Deny}}, true},
		{"asking is not denying", "bash", Ruleset{{Action: "bash", Resource: "*", Effect: Ask}}, false},
		{"an empty resource pattern is not every resource", "bash", Ruleset{{Action: "bash", Resource: "", Effect: Deny}}, false},
		{"no rule names the action: it asks, so it stays", "bash", nil, false},
		{"deny-all rules hide everything", "anything", DenyAllRules(SourceRun), true},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, WhollyDenied(tt.action, tt.rules)); diff != "" {
			t.Errorf("%s: WhollyDenied(%q) mismatch (-want +got):\n%s", tt.why, tt.action, diff)
		}
	}
}

func TestDenyAllRules(t *testing.T) {
	got := DenyAllRules(SourceUser)
	want := Ruleset{{Action: "*", Resource: "*", Effect: Deny, Source: SourceUser}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DenyAllRules mismatch (-want +got):\n%s", diff)
	}
	for _, action := range []string{"read", "bash", ""} {
		for _, resource := range []string{"", "main.go", ".env.example", "/tmp/x"} {
			if d := Evaluate(action, resource, got); d.Effect != Deny {
				t.Errorf("Evaluate(%q, %q) under deny-all rules = %v, want deny", action, resource, d.Effect)
			}
		}
	}
}

func TestDigest(t *testing.T) {
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return hex.EncodeToString(h[:])
	}
	tests := []struct {
		why   string
		rules Ruleset
		want  string
	}{
		{"the SHA-256 of the rules' JSON", DenyAllRules(SourceDefault),
			sum(`[{"action":"*","resource":"*","effect":"deny","source":"default"}]`)},
		{"nil is the empty list", nil, sum(`[]`)},
		{"empty is the empty list", Ruleset{}, sum(`[]`)},
		{"characters HTML would escape are escaped as encoding/json does",
			Ruleset{{Action: "bash", Resource: "a && b > c", Effect: Ask, Source: SourceUser}},
			sum(`[{"action":"bash","resource":"a \u0026\u0026 b \u003e c","effect":"ask","source":"user"}]`)},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.rules.Digest()); diff != "" {
			t.Errorf("%s: Digest mismatch (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestDigestDependsOnOrderAndContent(t *testing.T) {
	a := buildDefaults()
	b := buildDefaults()
	b[5], b[7] = b[7], b[5]
	c := buildDefaults()
	c[0].Effect = Deny
	if a.Digest() != buildDefaults().Digest() {
		t.Errorf("equal rulesets have different digests")
	}
	if a.Digest() == b.Digest() {
		t.Errorf("reordered rulesets have the same digest %s", a.Digest())
	}
	if a.Digest() == c.Digest() {
		t.Errorf("rulesets with different effects have the same digest %s", a.Digest())
	}
}
