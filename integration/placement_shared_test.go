package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
)

// A shared volume: hosts A and B, each in its own mount namespace,
// bind-mount the same real directory at the workspace path and both
// declare it with --locations. In each of 10 trials a run of 8 bash
// steps (each appending its effect's number to effects.txt) is driven
// through the queue group and one host is killed with SIGKILL, between two
// steps or while it runs a step's call, and not started again: the other
// executes the rest (it takes over the killed host's call in doubt after
// the lease), and the careful driver ends with every effect exactly once,
// no step left open, and every result after the kill committed by the
// survivor.
func TestPlacementSharedVolume(t *testing.T) {
	needNamespaces(t)
	for i := range placeKillTrials {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) { sharedVolume(t, i) })
	}
}

func sharedVolume(t *testing.T, trial int) {
	c := startProcServer(t)
	root, src := workspaces(t, "S")
	mkfiles(t, src["S"], map[string]string{"s/": ""})
	hosts := map[string]*nsHost{}
	for _, h := range []string{"A", "B"} {
		hosts[h] = serveNS(t, h, src["S"], root, "--nats", c.url(0), "--lease", leaseTTL, "--locations", root+"/*")
	}
	nc, err := nats.Connect(c.url(0))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var refused atomic.Int64
	run := startPlaced(t, nc, filepath.Join(root, "s"), &refused)
	if run == "" {
		t.FailNow()
	}
	ws := filepath.Join(src["S"], "s")
	d := &careful{t: t, nc: nc, run: run, next: 1, effects: filepath.Join(ws, "effects.txt")}
	k, how := killPlan(trial)
	var victim string
	var killedAt int
	next := heldEffect(t, d, ws, k, how, func(req commands.SubmitStepRequest, e int) {
		victim = []string{"A", "B"}[trial%2]
		if how != killBetween { // the host running the held call
			victim = runningHost(t, ws, e, hosts)
		}
		killedAt = req.Step
		hosts[victim].kill()
	})
	for e := next; e <= placeKillEffects; e++ {
		d.effect(e, plainEffect(e))
	}
	d.exactlyOnce(placeKillEffects)
	d.noneOpen()
	survivor := map[string]string{"A": "B", "B": "A"}[victim]
	results, _ := newRunLog(t, nc).results(run)
	by := map[string]int{}
	for _, res := range results {
		by[res.host]++
		if res.step >= killedAt && res.host != survivor {
			t.Errorf("the result of step %d (from step %d on, %s was dead) was committed by %q", res.step, killedAt, victim, res.host)
		}
	}
	t.Logf("trial %d: %s killed after %d effects, %s (step %d); then %d steps, %d in doubt, %d redone, %d waits, %d no_executor; results by host %v",
		trial+1, victim, k, killHow[how], killedAt, d.next-1, d.inDoubt, d.redone, d.waits, d.noExec, by)
}

// runningHost names the host whose engine runs effect e's held call: the
// call wrote its engine's pid to pid-E.
func runningHost(t *testing.T, ws string, e int, hosts map[string]*nsHost) string {
	t.Helper()
	var pid string
	until(t, "the held call's engine pid", func() bool {
		b, err := os.ReadFile(filepath.Join(ws, fmt.Sprintf("pid-%d", e)))
		pid = strings.TrimSpace(string(b))
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	for name, h := range hosts {
		if strconv.Itoa(h.cmd.Process.Pid) == pid {
			return name
		}
	}
	t.Fatalf("effect %d's call runs under pid %s, no host's", e, pid)
	return ""
}
