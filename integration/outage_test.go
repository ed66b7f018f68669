package integration

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/internal/syncbuf"
	"github.com/stepgate/stepgate/step"
)

// natsOutage is an external NATS server (in this process) on a fixed
// loopback address and store directory, that a test stops and starts again
// on both, and one `engine serve --nats` process on it.
type natsOutage struct {
	t          *testing.T
	addr, dir  string
	srv        *step.Embedded
	engine     *exec.Cmd
	engineErr  syncbuf.Buffer
	serving    chan string   // the engine's first line of stdout
	exited     chan struct{} // closed when the engine process has exited
	data       string
	downs, ups int
}

func newNATSOutage(t *testing.T) *natsOutage {
	o := &natsOutage{t: t, addr: freeAddr(t), dir: t.TempDir(), data: t.TempDir(), serving: make(chan string, 1)}
	t.Cleanup(func() {
		if o.engine != nil {
			_ = o.engine.Process.Kill()
			<-o.exited
		}
		if o.srv != nil {
			o.srv.Shutdown()
		}
	})
	return o
}

// up starts the NATS server on the outage's address and store directory.
func (o *natsOutage) up() {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: o.dir, Listen: o.addr})
	if err != nil {
		o.t.Fatal(err)
	}
	o.srv = srv
	o.ups++
}

// down shuts the NATS server down.
func (o *natsOutage) down() {
	o.srv.Shutdown()
	o.srv = nil
	o.downs++
}

// startEngine starts `engine serve --nats` without waiting for it to serve.
func (o *natsOutage) startEngine() {
	o.t.Helper()
	o.engine = exec.Command(engineBin, "serve", "--nats", "nats://"+o.addr, "--data", o.data, "--test-tools")
	o.engine.Stderr = &o.engineErr
	out, err := o.engine.StdoutPipe()
	if err != nil {
		o.t.Fatal(err)
	}
	if err := o.engine.Start(); err != nil {
		o.t.Fatal(err)
	}
	o.exited = make(chan struct{})
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		o.serving <- line
		_, _ = io.Copy(io.Discard, out)
		_ = o.engine.Wait()
		close(o.exited)
	}()
}

// waitServing waits until the engine says it serves.
func (o *natsOutage) waitServing(within time.Duration) {
	o.t.Helper()
	select {
	case line := <-o.serving:
		if !strings.HasPrefix(line, "stepgate serving") {
			o.t.Fatalf("engine serve did not start: %q\n%s", line, o.engineErr.String())
		}
	case <-time.After(within):
		o.t.Fatalf("engine serve not serving after %s:\n%s", within, o.engineErr.String())
	}
}

// stderrHas waits until the engine's stderr holds s n times.
func (o *natsOutage) stderrHas(s string, n int, within time.Duration) {
	o.t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if strings.Count(o.engineErr.String(), s) >= n {
			return
		}
		select {
		case <-o.exited:
			o.t.Fatalf("engine serve exited:\n%s", o.engineErr.String())
		default:
		}
	}
	o.t.Fatalf("engine serve did not say %q %d times within %s:\n%s", s, n, within, o.engineErr.String())
}

// warnings counts the engine's lines saying NATS is unavailable.
func (o *natsOutage) warnings() int {
	return strings.Count(o.engineErr.String(), "NATS unavailable")
}

// alive fails the test if the engine process has exited.
func (o *natsOutage) alive() {
	o.t.Helper()
	select {
	case <-o.exited:
		o.t.Fatalf("engine serve exited: %v\n%s", o.engine.ProcessState, o.engineErr.String())
	default:
	}
}

// trial is a kill trial's clients and checks on the outage's NATS server.
func (o *natsOutage) trial(clients, steps int) *killTrial {
	return &killTrial{t: o.t, data: o.data, addr: o.addr, ws: o.t.TempDir(), clients: clients, steps: steps, timeout: "90s"}
}

// `engine serve --nats URL` started before any NATS server is up says once
// that NATS is unavailable, keeps waiting without exiting, serves once the
// server starts, and a client's run completes.
func TestServeWaitsForNATSAtStart(t *testing.T) {
	o := newNATSOutage(t)
	o.startEngine()
	o.stderrHas("NATS unavailable at start", 1, 15*time.Second)
	time.Sleep(1500 * time.Millisecond) // several reconnect attempts: still one line
	if n := o.warnings(); n != 1 {
		t.Errorf("%d lines say NATS is unavailable, want 1:\n%s", n, o.engineErr.String())
	}
	o.up()
	o.waitServing(30 * time.Second)
	o.alive()

	k := o.trial(1, 5)
	wait := k.drive(time.Minute)
	wait()
	k.check()
}

// NATS stops three times while three `engine run` clients drive append_fx steps
// through `engine serve --nats`, and comes back on the same address and
// store: the engine never exits and says so once per outage, the clients
// ride it out (exit 0) through the one engine process, whose service's
// subscriptions survive each reconnect, and the kill -9 property holds (every step
// committed whole, none open, no side effect twice).
func TestClientsRideOutNATSOutages(t *testing.T) {
	o := newNATSOutage(t)
	o.up()
	o.startEngine()
	o.waitServing(30 * time.Second)
	k := o.trial(3, 300)
	wait := k.drive(3 * time.Minute)
	for i := range 3 {
		c := o.runningClient(k)
		k.progressed(c, lineCount(filepath.Join(k.ws, effects(c)))+5+rand.N(30))
		k.mu.Lock()
		k.running = append(k.running, k.clients-len(k.results))
		k.mu.Unlock()
		o.down()
		time.Sleep(jitter(500*time.Millisecond, 2*time.Second))
		o.up()
		o.stderrHas("NATS is back", i+1, 30*time.Second) // the next outage is one the engine sees
	}
	wait()
	k.check()
	// One line per outage, never a line per attempt.
	if n, back := o.warnings(), strings.Count(o.engineErr.String(), "NATS is back"); n != o.downs || back != o.downs {
		t.Errorf("%d outages, %d lines saying NATS is unavailable and %d that it is back, want one each", o.downs, n, back)
	}
	o.alive()
	if k.running[0] != 3 || k.running[2] == 0 {
		t.Errorf("clients running at the outages: %v, want 3 at the first and some at the last: the clients were too fast for the test", k.running)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("engine serve:\n%s", o.engineErr.String())
	}
}

// runningClient is a client of k that has not finished (0 when none).
func (o *natsOutage) runningClient(k *killTrial) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	finished := map[int]bool{}
	for _, r := range k.results {
		finished[r.n] = true
	}
	for _, c := range rand.Perm(k.clients) {
		if !finished[c] {
			return c
		}
	}
	return 0
}

// lineCount is the number of lines in a file (0 when it does not exist).
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}
