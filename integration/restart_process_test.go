package integration

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SIGKILL and restart `engine serve` (same data, default host name) twice
// while four `engine run` clients drive 200 append_fx steps each: every
// client finishes its script and exits 0, and the kill -9 property holds.
func TestClientsRideOutSIGKILLAndRestart(t *testing.T) {
	k := newKillTrial(t, 4, 200, "90s")
	wait := k.drive(2 * time.Minute)
	k.progressed(rand.N(4), 10+rand.N(60))
	k.crash(jitter(0, time.Second))
	k.progressed(rand.N(4), 110+rand.N(60))
	k.crash(jitter(0, time.Second))
	wait()
	k.check()
	if k.running[0] != 4 || k.running[1] == 0 {
		t.Errorf("clients running at the kills: %v, want 4 at the first and some at the second: the clients were too fast for the test", k.running)
	}
}

// The acceptance kill -9 test: trials of SIGKILL at a random moment under
// four concurrent clients (default host name) and a restart, each checked
// for lost committed steps, duplicate side effects, open steps and clients
// that did not complete. The soak build tag runs 200 (killsoak_test.go).
func TestKill9Trials(t *testing.T) {
	kill9Trials(t, 20)
}

func kill9Trials(t *testing.T, n int) {
	for i := range n {
		t.Run("", func(t *testing.T) {
			k := newKillTrial(t, 4, 40, "60s")
			wait := k.drive(90 * time.Second)
			k.progressed(rand.N(4), rand.N(36))
			k.crash(jitter(0, 300*time.Millisecond))
			wait()
			k.check()
			if t.Failed() {
				t.Logf("trial %d failed", i)
			}
		})
	}
}

// A second `engine serve` on a data directory in use fails at once, saying
// so, and leaves the first serving; the first's identity is kept.
func TestSecondServeOnOneDataDirectoryIsRefused(t *testing.T) {
	k := newKillTrial(t, 0, 0, "")
	id, err := os.ReadFile(filepath.Join(k.data, "host.json"))
	if err != nil {
		t.Fatalf("the first start keeps its identity in the data directory: %v", err)
	}
	// A serve that waited for the lock would wait for ever: the minute
	// only stops such a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, engineBin, "serve", "--data", k.data, "--listen", freeAddr(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("a second engine serve on one data directory started")
	}
	if ctx.Err() != nil || !strings.Contains(stderr.String(), "data directory in use by process") {
		t.Fatalf("the second serve: %v, with:\n%s\nwant it to fail at once, naming the process", ctx.Err(), stderr.String())
	}
	engine(t, "runs", "--nats", "nats://"+k.addr) // the first still serves
	if again, _ := os.ReadFile(filepath.Join(k.data, "host.json")); string(again) != string(id) {
		t.Errorf("the identity changed from %s to %s", id, again)
	}
}
