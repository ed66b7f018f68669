package builtin_test

import (
	"reflect"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// A prepared call exports one list of permission requests, the one the gate
// decides: a caller that decides it sees a rule written with a path's
// absolute form, so an absolute deny of a file inside the location blocks
// every built-in tool that touches it. (It once exported a second list,
// without the absolute forms, under the name a caller reaches for; deciding
// it failed open.)
func TestPreparedExportsTheRequestsTheGateDecides(t *testing.T) {
	n := 0
	want := reflect.TypeFor[[]descriptor.Request]()
	pt := reflect.TypeFor[*executor.Prepared]()
	for i := range pt.NumMethod() {
		if m := pt.Method(i); m.Type.NumOut() == 1 && m.Type.Out(0) == want {
			n++
			if m.Name != "Requests" {
				t.Errorf("Prepared.%s returns requests: the one list is Prepared.Requests", m.Name)
			}
		}
	}
	if n != 1 {
		t.Errorf("Prepared has %d methods returning requests, want 1", n)
	}

	loc := t.TempDir()
	writeTree(t, loc, map[string]string{"secret/key": "k = 1\n", "open.txt": "o\n"})
	root := realSlash(t, loc)
	tools := map[string]func() (*executor.Tool, error){"read": builtin.Read, "read_file": builtin.ReadFile, "edit": builtin.Edit,
		"write": builtin.Write, "apply_patch": builtin.ApplyPatch, "bash": builtin.Bash}
	tests := []struct {
		tool   string
		action string // the action the absolute deny names
		in     any
	}{
		{"read", "read", builtin.ReadInput{Path: "secret/key"}},
		{"read_file", "read", map[string]string{"path": "secret/key"}},
		{"edit", "edit", builtin.EditInput{Path: "secret/key", OldString: "k = 1", NewString: "k = 2"}},
		{"write", "edit", builtin.WriteInput{Path: "secret/key", Content: "x"}},
		{"apply_patch", "edit", builtin.ApplyPatchInput{PatchText: "*** Begin Patch\n*** Delete File: secret/key\n*** End Patch\n"}},
		{"bash", "edit", builtin.BashInput{Command: "echo x > secret/key"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			tool, err := tools[tt.tool]()
			if err != nil {
				t.Fatal(err)
			}
			p, err := prepare(t, tool, loc, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			rules := gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow},
				{Action: tt.action, Resource: root + "/secret/*", Effect: gate.Deny}}
			if v := gate.Decide(gate.Configured, p.Requests(), rules, nil); v.Kind != gate.KindBlock {
				t.Errorf("%s (%s), want block by the absolute deny; requests %+v", v.Kind, v.Reason, p.Requests())
			}
		})
	}
}
