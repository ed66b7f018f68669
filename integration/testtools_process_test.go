package integration

import (
	"slices"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/stepgate/stepgate/commands"
)

// TestServedCatalogueHasTestToolsOnlyWhenAsked: an engine served without
// --test-tools shows an agent none of the benchmark's and tests' tools, in a
// run's catalogue (start_run) nor in `engine mcp serve`'s tools/list; served
// with --test-tools, it shows them all.
func TestServedCatalogueHasTestToolsOnlyWhenAsked(t *testing.T) {
	testTools := []string{"echo", "echo_fx", "wait", "wait_fx", "append_fx"}
	for _, tc := range []struct {
		name  string
		flags []string
		want  []string // the test tools the catalogue shows
	}{
		{"default", nil, nil},
		{"--test-tools", []string{"--test-tools"}, testTools},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the processes' user file: none
			addr, ws := freeAddr(t), t.TempDir()
			srv := serveArgs(t, append([]string{"--data", t.TempDir(), "--listen", addr, "--host", "proc"}, tc.flags...)...)
			t.Cleanup(func() { srv.stop(t) }) // after the MCP session ends
			nc, err := nats.Connect("nats://" + addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()

			info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
			var names []string
			for _, tl := range info.Catalog.Tools {
				names = append(names, tl.Name)
			}
			if got := shownOf(testTools, names); !slices.Equal(got, tc.want) {
				t.Errorf("start_run's catalogue shows the test tools %q, want %q (all: %q)", got, tc.want, names)
			}
			if !slices.Contains(names, "read") {
				t.Errorf("start_run's catalogue lacks read: %q", names)
			}

			gw := &gwSetup{url: "nats://" + addr, loc: ws, srv: srv}
			cs, _ := gw.goClient(t, nil)
			listed := gwToolNames(t, cs)
			if got := shownOf(testTools, listed); !slices.Equal(got, tc.want) {
				t.Errorf("mcp serve's tools/list shows the test tools %q, want %q (all: %q)", got, tc.want, listed)
			}
		})
	}
}

// shownOf is those of tools that names holds, in tools' order (nil for none).
func shownOf(tools, names []string) []string {
	var out []string
	for _, n := range tools {
		if slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return out
}
