package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// startRunAsync sends start_run for location and returns the channel its
// answer (or the request's failure) will arrive on.
func startRunAsync(t *testing.T, nc *nats.Conn, location string) <-chan *nats.Msg {
	t.Helper()
	b, _ := json.Marshal(commands.StartRunRequest{Location: location})
	out := make(chan *nats.Msg, 1)
	go func() {
		msg, err := nc.RequestWithContext(ctxGuard(t), "stepgate.start_run", b)
		if err != nil {
			msg = &nats.Msg{Header: nats.Header{"Test-Error": {err.Error()}}}
		}
		out <- msg
	}()
	return out
}

// peakRSS is process pid's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// A real `engine serve`, and runs started in locations whose project file
// is hostile. Every start_run is answered, at once, with a run denied
// everything (no tools shown; a call is refused), and serve's log names
// the file and why: 32 at the same time against a named pipe whose other
// end is never opened (a request that waited on it would never be
// answered), then one against each other kind. The host's memory does not
// grow by the 600 MB file (its peak stays under 512 MiB: the file was never
// read). Then 32 more against the pipe are sent and serve gets SIGTERM
// while they are in flight: it exits, with status 0.
func TestServeRefusesHostileProjectFiles(t *testing.T) {
	xdg := "XDG_CONFIG_HOME=" + t.TempDir()
	addr := freeAddr(t)
	srv := serveEnv(t, []string{xdg}, "--data", t.TempDir(), "--listen", addr, "--host", "hostile", "--test-tools")
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)

	locs := map[string]string{}
	for _, kind := range hostileKinds {
		locs[kind] = t.TempDir()
		makeHostile(t, kind, projectFile(locs[kind]))
	}
	deniedRun := func(what string, msg *nats.Msg) {
		t.Helper()
		if failed := msg.Header.Get("Test-Error"); failed != "" {
			t.Fatalf("%s: start_run: %s; want a run denied everything", what, failed)
		}
		info, err := answerOf[commands.RunInfo](t, "start_run", msg)
		if err != nil {
			t.Fatalf("%s: start_run = %v, want a run denied everything", what, err)
		}
		if len(info.Catalog.Tools) != 0 {
			t.Errorf("%s: the run shows %d tools, want none", what, len(info.Catalog.Tools))
		}
		out := must(ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: 1,
			Calls: []commands.CallRequest{{ID: "c", Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`)}}}))
		if r := out.Results[0]; r.Verdict != events.VerdictReject || r.Content != "Unknown tool: echo" {
			t.Errorf("%s: echo = %s %q, want it refused", what, r.Verdict, r.Content)
		}
	}

	var pending []<-chan *nats.Msg
	for range 32 {
		pending = append(pending, startRunAsync(t, nc, locs["a FIFO"]))
	}
	for i, ch := range pending {
		deniedRun(fmt.Sprintf("a FIFO, request %d", i+1), <-ch)
	}
	for _, kind := range hostileKinds[1:] {
		deniedRun(kind, <-startRunAsync(t, nc, locs[kind]))
	}
	if peak := peakRSS(t, srv.cmd.Process.Pid); peak > 512<<20 {
		t.Errorf("serve's peak memory is %d MiB: the 600 MB file was read", peak>>20)
	}

	var inFlight sync.WaitGroup
	for range 32 {
		inFlight.Go(func() { <-startRunAsync(t, nc, locs["a FIFO"]) })
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, srv.cmd, "engine serve after SIGTERM"); code != 0 {
		t.Errorf("serve after SIGTERM: exit %d\n%s", code, srv.stderr.String())
	}
	inFlight.Wait()

	log := srv.stderr.String()
	for kind, why := range map[string]string{
		"a FIFO": "a named pipe, not a regular file", "600 MB": "629145600 bytes, more than the 262144 bytes",
		"a link to /dev/zero": "config.yaml is a symbolic link", "a directory": "a directory, not a regular file",
	} {
		if !strings.Contains(log, projectFile(locs[kind])) || !strings.Contains(log, why) {
			t.Errorf("serve's log does not name %s (%s) and why (%s):\n%s", projectFile(locs[kind]), kind, why, log)
		}
	}
}
