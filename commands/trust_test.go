package commands_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step/steptest"
)

// A cloned repository cannot grant itself authority: with the user's file
// saying bash: ask, a project file saying bash: allow and "*": allow leaves
// bash asking and reads outside the location asking (the built-in
// external_directory ask), on a host that reads the files; the same project
// trusted by the user's file allows both, as its layer did before.
func TestProjectFileCannotWidenTheUsersRules(t *testing.T) {
	s := steptest.Start(t, "")
	loc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(loc, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeAt(t, loc, ".stepgate/config.yaml", "agents:\n  build:\n    permission:\n      \"*\": allow\n      bash: allow\n")
	outside := "/etc/passwd" // outside the location and the temporary directory
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("the test reads %s outside the location: %v", outside, err)
	}
	bash := call("b", "bash", builtin.BashInput{Command: "echo widened"})
	read := call("r", "read", builtin.ReadInput{Path: outside})
	for _, tt := range []struct {
		why  string
		user string
		asks bool
	}{
		{"untrusted: the project only narrows", "agents:\n  build:\n    permission:\n      bash: ask\n", true},
		{"trusted by the user's file: its layer as before", "agents:\n  build:\n    permission:\n      bash: ask\ntrusted_projects: [" + strconv.Quote(loc) + "]\n", false},
	} {
		h, _ := loaderHost(t, s, tt.user)
		for _, c := range []struct {
			name string
			call commands.CallRequest
		}{{"bash", bash}, {"a read outside the location", read}} {
			out := submit(t, h, startIn(t, h, loc, ""), 1, c.call)
			if asked := len(out.Tickets) == 1; asked != tt.asks {
				t.Errorf("%s: %s: asked %v, want %v: %+v", tt.why, c.name, asked, tt.asks, out.Results)
			}
		}
	}
}
