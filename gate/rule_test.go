package gate

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEffectValid(t *testing.T) {
	tests := []struct {
		why    string
		effect Effect
		want   bool
	}{
		{"allow is an effect", Allow, true},
		{"deny is an effect", Deny, true},
		{"ask is an effect", Ask, true},
		{"the empty effect is not", "", false},
		{"effects are case-sensitive", "Allow", false},
		{"confirm is a verdict kind, not an effect", "confirm", false},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.effect.Valid()); diff != "" {
			t.Errorf("%s: Effect(%q).Valid() mismatch (-want +got):\n%s", tt.why, tt.effect, diff)
		}
	}
}

func TestSourceLabel(t *testing.T) {
	tests := []struct {
		why       string
		source    Source
		wantLabel string
		wantValid bool
	}{
		{"built-in agent defaults", SourceDefault, "built-in default", true},
		{"the user's config", SourceUser, "user config", true},
		{"the project's config", SourceProject, "project config", true},
		{"an always approval", SourceSaved, "saved approval", true},
		{"a run override", SourceRun, "run override", true},
		{"an unknown source shows as it is", "plugin:mcp", "plugin:mcp", false},
		{"the empty source is named", "", "unknown source", false},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.wantLabel, tt.source.Label()); diff != "" {
			t.Errorf("%s: Source(%q).Label() mismatch (-want +got):\n%s", tt.why, tt.source, diff)
		}
		if diff := cmp.Diff(tt.wantValid, tt.source.Valid()); diff != "" {
			t.Errorf("%s: Source(%q).Valid() mismatch (-want +got):\n%s", tt.why, tt.source, diff)
		}
	}
}

func TestRuleString(t *testing.T) {
	tests := []struct {
		why  string
		rule Rule
		want string
	}{
		{"action, then the resource pattern quoted", Rule{Action: "bash", Resource: "rm *"}, `bash "rm *"`},
		{"wildcard action", Rule{Action: "*", Resource: "*"}, `* "*"`},
		{"quotes and newlines in the pattern are escaped", Rule{Action: "bash", Resource: "echo \"hi\"\n*"}, `bash "echo \"hi\"\n*"`},
		{"empty resource pattern", Rule{Action: "read"}, `read ""`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.rule.String()); diff != "" {
			t.Errorf("%s: String() mismatch (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestRuleJSON(t *testing.T) {
	r := Rule{Action: "bash", Resource: "go test *", Effect: Allow, Source: SourceProject}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	want := `{"action":"bash","resource":"go test *","effect":"allow","source":"project"}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON mismatch (-want +got):\n%s", diff)
	}
	var got Rule
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}
