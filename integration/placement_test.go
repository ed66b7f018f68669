package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// Shape of the two-workspace test: runs, steps per run, runs driven at once.
const (
	placeRuns     = 20
	placeSteps    = 20
	placeParallel = 4
)

// startPlaced starts a run in loc through the queue group. A start refused
// because the host that got it has no such directory is counted in refused
// and sent again (a few times): with placement, none is.
func startPlaced(t *testing.T, nc *nats.Conn, loc string, refused *atomic.Int64) string {
	t.Helper()
	for try := 0; try < 10; try++ {
		var info commands.RunInfo
		a := askService(nc, "start_run", commands.StartRunRequest{Location: loc}, 30*time.Second, &info)
		switch {
		case a.code == commands.CodeInvalidInput && strings.Contains(a.msg, "no such file"):
			if refused.Add(1) <= 3 {
				t.Errorf("start_run in %s: %s: %s", loc, a.code, a.msg)
			}
			continue
		case a.code != "" || a.err != nil:
			t.Errorf("start_run in %s: %s %s %v", loc, a.code, a.msg, a.err)
			return ""
		}
		return info.Run
	}
	t.Errorf("start_run in %s refused 10 times", loc)
	return ""
}

// Hosts A and B, each in its own mount namespace, see their own
// workspaces at one path: the runs' locations under ws/a exist only on A,
// those under ws/b only on B. 20 runs of 20 bash steps, half in each,
// driven through the queue group (consecutive steps land on either host):
// no answer names no_location, every run's log.txt holds 1..20 in order,
// and every call's result was committed by the host that holds its
// location. On one nats-server, both hosts hold what exists on their
// filesystem; on the 3-node cluster, A declares its workspace roots with
// --locations and B declares none.
func TestPlacementTwoHostsOwnWorkspaces(t *testing.T) {
	needNamespaces(t)
	t.Run("one server", func(t *testing.T) {
		c := startProcServer(t)
		ownWorkspaces(t, [3]string{c.url(0), c.url(0), c.url(0)}, "1", nil)
	})
	t.Run("cluster", func(t *testing.T) {
		c := startProcCluster(t, 3)
		ownWorkspaces(t, [3]string{c.url(0), c.url(1), c.url(2)}, "3", func(root string) []string {
			return []string{"--locations", root + "/a/*"}
		})
	})
}

// ownWorkspaces runs the test with A on urls[0], B on urls[1] and the
// driver on urls[2]; declare, when set, gives A's --locations.
func ownWorkspaces(t *testing.T, urls [3]string, replicas string, declare func(root string) []string) {
	root, src := workspaces(t, "A", "B")
	holder := map[string]string{}
	locs := make([]string, placeRuns)
	for r := range placeRuns {
		h, sub := "A", "a"
		if r%2 == 1 {
			h, sub = "B", "b"
		}
		locs[r] = filepath.Join(root, sub, fmt.Sprintf("r%02d", r))
		holder[locs[r]] = h
		mkfiles(t, src[h], map[string]string{filepath.Join(sub, fmt.Sprintf("r%02d", r)) + "/": ""})
	}
	var aFlags []string
	if declare != nil {
		aFlags = declare(root)
	}
	serveNS(t, "A", src["A"], root, append([]string{"--nats", urls[0], "--replicas", replicas}, aFlags...)...)
	serveNS(t, "B", src["B"], root, "--nats", urls[1], "--replicas", replicas)
	nc, err := nats.Connect(urls[2])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	var refused, noLoc, failed atomic.Int64
	runs := make([]string, placeRuns)
	work := make(chan int)
	var wg sync.WaitGroup
	for range placeParallel {
		wg.Go(func() {
			for r := range work {
				if runs[r] = startPlaced(t, nc, locs[r], &refused); runs[r] == "" {
					continue
				}
				for n := 1; n <= placeSteps; n++ {
					var out commands.StepOutcome
					req := commands.SubmitStepRequest{Run: runs[r], Step: n, Calls: []commands.CallRequest{
						bashCall(fmt.Sprintf("c%d", n), fmt.Sprintf("echo %d >> log.txt", n))}}
					a := askService(nc, "submit_step", req, 60*time.Second, &out)
					if a.code != "" || a.err != nil {
						if strings.Contains(a.msg, "no_location") {
							noLoc.Add(1)
						}
						if failed.Add(1) <= 5 {
							t.Errorf("run %d step %d: %s %s %v", r, n, a.code, a.msg, a.err)
						}
						break
					}
					if !out.Final || len(out.Results) != 1 {
						t.Errorf("run %d step %d: %+v, want final with one result", r, n, out)
						break
					}
					if res := out.Results[0]; res.IsError {
						if strings.Contains(res.Content, "no_location") {
							noLoc.Add(1)
						}
						if failed.Add(1) <= 5 {
							t.Errorf("run %d (held by %s) step %d answered the model: %q", r, holder[locs[r]], n, res.Content)
						}
					}
				}
				var sum commands.RunSummary
				if a := askService(nc, "end_run", commands.EndRunRequest{Run: runs[r]}, 30*time.Second, &sum); a.code != "" || a.err != nil {
					t.Errorf("end run %d: %s %s %v", r, a.code, a.msg, a.err)
				}
			}
		})
	}
	for r := range placeRuns {
		work <- r
	}
	close(work)
	wg.Wait()
	t.Logf("%d runs of %d steps: %d starts refused, %d answers naming no_location, %d failed steps",
		placeRuns, placeSteps, refused.Load(), noLoc.Load(), failed.Load())

	servedSteps(t, nc, 2)

	want := ""
	for n := 1; n <= placeSteps; n++ {
		want += fmt.Sprintf("%d\n", n)
	}
	rl := newRunLog(t, nc)
	elsewhere := 0
	for r, run := range runs {
		if run == "" {
			continue
		}
		h := holder[locs[r]]
		rel, _ := filepath.Rel(root, locs[r])
		b, err := os.ReadFile(filepath.Join(src[h], rel, "log.txt"))
		if err != nil || string(b) != want {
			t.Errorf("run %d (held by %s): log.txt %q %v, want 1..%d in order", r, h, b, err, placeSteps)
		}
		results, kinds := rl.results(run)
		if len(results) != placeSteps {
			t.Errorf("run %d: %d results in the log, want %d", r, len(results), placeSteps)
		}
		for _, res := range results {
			if res.host != h {
				elsewhere++
				if elsewhere <= 5 {
					t.Errorf("run %d (held by %s): the result of step %d was committed by %q", r, h, res.step, res.host)
				}
			}
		}
		if r < 2 {
			t.Logf("run %d (held by %s): commits by kind and host: %v", r, h, kinds)
		}
		if got := kinds[events.KindStart]; len(got) != 1 || got[0] != h {
			t.Errorf("run %d (held by %s): started by %v", r, h, got)
		}
	}
	if elsewhere > 0 {
		t.Errorf("%d call results committed by a host that does not hold the run's location", elsewhere)
	}
}

// servedSteps asks every service instance for its statistics: each of the
// hosts was handed submit_step requests by the queue group (so steps of a
// run landed on a host that does not hold its location), and none
// answered an error.
func servedSteps(t *testing.T, nc *nats.Conn, hosts int) {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SRV.STATS.stepgate", inbox, nil); err != nil {
		t.Fatal(err)
	}
	for i := range hosts {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("statistics of %d of %d hosts: %v", i, hosts, err)
		}
		var st micro.Stats
		if err := json.Unmarshal(msg.Data, &st); err != nil {
			t.Fatal(err)
		}
		served := map[string]int{}
		for _, ep := range st.Endpoints {
			served[ep.Name] = ep.NumRequests
			if ep.NumErrors > 0 {
				t.Errorf("instance %s: %d errors on %s: %s", st.ID, ep.NumErrors, ep.Name, ep.LastError)
			}
		}
		if served["submit_step"] == 0 {
			t.Errorf("instance %s answered no submit_step: %v", st.ID, served)
		}
		t.Logf("instance %s answered %v", st.ID, served)
	}
}
