package integration

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
)

// Shape of the first-start test: fresh locations, runs started at once in
// each.
const (
	firstStartLocations = 40
	firstStartRuns      = 16
)

// Many runs start at once in a location no run used yet, on two hosts
// that see it (a shared volume, both in mount namespaces of their own):
// the first start marks the location, and every other start, on either
// host, reads that mark; none fails, as none did before locations had
// identities. (The marker is written once; a start that finds it made but
// not yet written must not take it for another location's.)
func TestPlacementFirstStartsAtOnce(t *testing.T) {
	needNamespaces(t)
	c := startProcServer(t)
	root, src := workspaces(t, "S")
	for _, h := range []string{"A", "B"} {
		serveNS(t, h, src["S"], root, "--nats", c.url(0))
	}
	nc, err := nats.Connect(c.url(0))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	failed := 0
	for l := range firstStartLocations {
		sub := fmt.Sprintf("fresh-%d", l)
		mkfiles(t, src["S"], map[string]string{sub + "/": ""})
		var wg sync.WaitGroup
		errs := make([]string, firstStartRuns)
		for r := range firstStartRuns {
			wg.Go(func() {
				var info commands.RunInfo
				a := askService(nc, "start_run", commands.StartRunRequest{Location: filepath.Join(root, sub)}, 30*time.Second, &info)
				if a.code != "" || a.err != nil {
					errs[r] = fmt.Sprintf("%s: %s %v", a.code, a.msg, a.err)
				}
			})
		}
		wg.Wait()
		for r, e := range errs {
			if e != "" {
				if failed++; failed <= 5 {
					t.Errorf("location %d, start %d of %d at once: %s", l, r+1, firstStartRuns, e)
				}
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d starts failed", failed, firstStartLocations*firstStartRuns)
	}
}
