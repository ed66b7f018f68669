package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
)

// leaseTTL is the hosts' lease in the lease tests: taken over a second
// after its renewals stop.
const leaseTTL = "1s"

// leased is an `engine serve` process with a short lease and its metrics.
type leased struct {
	*server
	name, metrics string
}

// serveLeased starts host name on the NATS server at url with a short
// lease, the test tools and metrics.
func serveLeased(t *testing.T, url, name string, extra ...string) *leased {
	t.Helper()
	addr := freeAddr(t)
	args := append([]string{"--nats", url, "--data", t.TempDir(), "--host", name, "--test-tools", "--lease", leaseTTL, "--metrics", addr}, extra...)
	s := serveArgs(t, args...)
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused one would not stop
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
	})
	return &leased{server: s, name: name, metrics: "http://" + addr + "/metrics"}
}

// natsServer starts a NATS server with JetStream in this process, on a
// loopback listener, for engine processes to share (pausing or killing one
// of them leaves NATS up).
func natsServer(t *testing.T) (url string, nc *nats.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: t.TempDir(), Listen: freeAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	url = e.ClientURL()
	if nc, err = nats.Connect(url, nats.MaxReconnects(-1)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return url, nc
}

// query asks the service, sending the request again after a short wait
// without answer (a paused host holds the requests the queue group hands
// it), until it is answered or 30 s passed.
func query[T any](t *testing.T, nc *nats.Conn, endpoint string, req any) (*T, error) {
	t.Helper()
	b, _ := json.Marshal(req)
	for deadline := time.Now().Add(30 * time.Second); ; {
		msg, err := nc.Request("stepgate."+endpoint, b, 500*time.Millisecond)
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no answer in 30s", endpoint)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", endpoint, err)
		}
		return answerOf[T](t, endpoint, msg)
	}
}

// until polls cond every 20 ms for 30 s at most.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30s", what)
		}
	}
}

// showRun is the run as a host shows it.
func showRun(t *testing.T, nc *nats.Conn, run string) *projection.Run {
	t.Helper()
	r, err := query[projection.Run](t, nc, "show", commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatalf("show %s: %v", run, err)
	}
	return r
}

// metric scrapes one sample (no labels, or the first with labels) from a
// host's /metrics; -1 when it is not there.
func metric(t *testing.T, url, name string, labels ...string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := name
	if len(labels) > 0 {
		want = fmt.Sprintf(`%s{%s="%s"}`, name, labels[0], labels[1])
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == want {
			var v float64
			fmt.Sscan(f[1], &v)
			return v
		}
	}
	return -1
}

// leaseRecord reads host's record in the lease bucket.
func leaseRecord(t *testing.T, nc *nats.Conn, host string) step.LeaseEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := step.Open(ctx, js, step.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := step.OpenLeases(ctx, js, l)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ls.Get(ctx, host)
	if err != nil {
		t.Fatalf("lease of %s: %v", host, err)
	}
	return rec
}

// lines counts each line of a file in dir ("" for none).
func lines(t *testing.T, dir, name string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for l := range strings.Lines(string(b)) {
		n[strings.TrimSuffix(l, "\n")]++
	}
	return n
}
