package commands

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
)

// narrowSave takes one narrower pattern that still matches the call, and
// refuses the rest with invalid_input.
func TestNarrowSave(t *testing.T) {
	edit := events.Request{Action: "edit", Resources: []string{"src/a.go"}, Save: []string{"*"}, Root: "/w"}
	tests := []struct {
		why     string
		asked   []events.Request
		pattern string
		want    []events.Request // nil: refused
	}{
		{"a directory within the project", []events.Request{edit}, "src/*",
			[]events.Request{{Action: "edit", Resources: []string{"src/a.go"}, Save: []string{"src/*"}, Root: "/w"}}},
		{"the file itself, by its absolute path", []events.Request{edit}, "/w/src/a.go",
			[]events.Request{{Action: "edit", Resources: []string{"src/a.go"}, Save: []string{"/w/src/a.go"}, Root: "/w"}}},
		{"a directory the call is not in", []events.Request{edit}, "test/*", nil},
		{"wider than the save pattern", []events.Request{{Action: "bash", Resources: []string{"git status"}, Save: []string{"git status"}}}, "git *", nil},
		{"two patterns saved", []events.Request{edit, {Action: "bash", Resources: []string{"ls"}, Save: []string{"ls"}}}, "src/*", nil},
		{"nothing saved (it always asks)", []events.Request{{Action: "bash", Resources: []string{"x"}, Ask: true}}, "x", nil},
		{"a request that saves nothing is left as it is", []events.Request{edit, {Action: "bash", Resources: []string{"x"}, Ask: true}}, "src/*",
			[]events.Request{{Action: "edit", Resources: []string{"src/a.go"}, Save: []string{"src/*"}, Root: "/w"}, {Action: "bash", Resources: []string{"x"}, Ask: true}}},
	}
	for _, tt := range tests {
		got, err := narrowSave("T", tt.asked, tt.pattern)
		if tt.want == nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Errorf("%s: %+v, %v; want invalid_input", tt.why, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.why, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, diff)
		}
	}
}
