package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
)

// Hosts A and B each hold a directory at one path, with different
// content: whoami.txt says "A" on A and "B" on B. A run started there
// through the queue group is pinned to the directory of the host that
// started it; its 20 steps, each `cat whoami.txt >> seen.txt`, run there
// only: every line of seen.txt names that host and the other's directory
// has no seen.txt. Then the pinned directory is moved away and another
// made at its path, with the same whoami.txt: the next step is refused
// (an error, or a result that says the call did not run) and touches
// neither the new directory nor the old one.
func TestPlacementSamePathOtherDirectory(t *testing.T) {
	needNamespaces(t)
	c := startProcServer(t)
	root, src := workspaces(t, "A", "B")
	for _, h := range []string{"A", "B"} {
		mkfiles(t, src[h], map[string]string{"w/whoami.txt": h + "\n"})
		serveNS(t, h, src[h], root, "--nats", c.url(0))
	}
	nc, err := nats.Connect(c.url(0))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	loc := filepath.Join(root, "w")
	var refused atomic.Int64
	run := startPlaced(t, nc, loc, &refused)
	if run == "" {
		t.FailNow()
	}
	_, kinds := newRunLog(t, nc).results(run)
	pinned := kinds["start"]
	if len(pinned) != 1 || src[pinned[0]] == "" {
		t.Fatalf("run %s started by %v, want one of A and B", run, pinned)
	}
	p := pinned[0]
	other := map[string]string{"A": "B", "B": "A"}[p]
	d := &careful{t: t, nc: nc, run: run, next: 1}
	for n := 1; n <= placeSteps; n++ {
		res := d.submit(n, bashCall(fmt.Sprintf("c%d", n), "cat whoami.txt >> seen.txt"))
		if res.IsError {
			t.Errorf("step %d: %q", n, res.Content)
		}
	}
	seen := lines(t, filepath.Join(src[p], "w"), "seen.txt")
	if seen[p] != placeSteps || len(seen) != 1 {
		t.Errorf("run pinned to %s: seen.txt in its directory holds %v, want %q %d times", p, seen, p, placeSteps)
	}
	if got := lines(t, filepath.Join(src[other], "w"), "seen.txt"); len(got) != 0 {
		t.Errorf("run pinned to %s: %s's directory at the same path has seen.txt %v", p, other, got)
	}
	t.Logf("run pinned to %s (%d starts refused, %d waits, %d no_executor): seen.txt %v", p, refused.Load(), d.waits, d.noExec, seen)

	// The pinned directory is replaced under the host's feet.
	old := filepath.Join(src[p], "w.old")
	if err := os.Rename(filepath.Join(src[p], "w"), old); err != nil {
		t.Fatal(err)
	}
	mkfiles(t, src[p], map[string]string{"w/whoami.txt": p + "\n"})
	var out commands.StepOutcome
	req := commands.SubmitStepRequest{Run: run, Step: placeSteps + 1, Calls: []commands.CallRequest{
		bashCall("replaced", "cat whoami.txt >> seen.txt")}}
	a := askService(nc, "submit_step", req, 30*time.Second, &out)
	switch {
	case a.err != nil:
		t.Errorf("the step in the replaced directory: no answer: %v", a.err)
	case a.code != "":
		t.Logf("the step in the replaced directory is refused: %s: %s", a.code, a.msg)
	case len(out.Results) != 1 || !out.Results[0].IsError || !strings.Contains(out.Results[0].Content, "not run") && !strings.Contains(out.Results[0].Content, "did not"):
		t.Errorf("the step in the replaced directory: %+v, want it refused, or a result saying the call did not run", out)
	default:
		t.Logf("the step in the replaced directory answers: %q", out.Results[0].Content)
	}
	if got := lines(t, filepath.Join(src[p], "w"), "seen.txt"); len(got) != 0 {
		t.Errorf("the new directory at the run's path got seen.txt %v: the replaced directory was used", got)
	}
	if got := lines(t, old, "seen.txt"); got[p] != placeSteps || len(got) != 1 {
		t.Errorf("the moved directory's seen.txt now holds %v, want %q %d times", got, p, placeSteps)
	}
	if got := lines(t, filepath.Join(src[other], "w"), "seen.txt"); len(got) != 0 {
		t.Errorf("%s's directory at the same path got seen.txt %v", other, got)
	}
}
