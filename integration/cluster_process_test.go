package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// natsServerBin builds the nats-server binary from the module once per test
// binary, beside the engine binary (TestMain removes both).
var natsServerBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(engineBin), "nats-server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build nats-server: %w\n%s", err, out)
	}
	return bin, nil
})

// procCluster is a JetStream cluster of nats-server processes, routed on
// loopback, each with a configuration file and a store in temporary
// directories: a node can be killed with SIGKILL, paused with SIGSTOP and
// resumed, and started again on its store. Every node still running is
// killed when the test ends.
type procCluster struct {
	t     *testing.T
	bin   string
	confs []string
	ports []int
	mons  []int // each node's monitoring (HTTP) port
	names []string
	procs []*exec.Cmd // nil while a node is down
}

// startProcCluster starts n nodes and waits until the cluster has a meta
// leader.
func startProcCluster(t *testing.T, n int) *procCluster {
	t.Helper()
	bin, err := natsServerBin()
	if err != nil {
		t.Fatal(err)
	}
	c := &procCluster{t: t, bin: bin, procs: make([]*exec.Cmd, n)}
	routes := make([]string, n)
	clusterPorts := make([]int, n)
	for i := range n {
		c.ports = append(c.ports, freePort(t))
		c.mons = append(c.mons, freePort(t))
		clusterPorts[i] = freePort(t)
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", clusterPorts[i])
		c.names = append(c.names, fmt.Sprintf("n%d", i+1))
	}
	dir := t.TempDir()
	for i := range n {
		conf := filepath.Join(dir, c.names[i]+".conf")
		text := fmt.Sprintf(`server_name: %s
listen: "127.0.0.1:%d"
http: "127.0.0.1:%d"
max_payload: %d
jetstream {
  store_dir: %q
  max_memory_store: 64MB
}
cluster {
  name: stepgate
  listen: "127.0.0.1:%d"
  routes: [%s]
}
`, c.names[i], c.ports[i], c.mons[i], step.DefaultMaxMsgSize, filepath.Join(dir, c.names[i]), clusterPorts[i], strings.Join(routes, ", "))
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		c.confs = append(c.confs, conf)
	}
	t.Cleanup(func() {
		for i := range c.procs {
			c.signal(i, syscall.SIGCONT)
			c.kill9(i)
		}
	})
	for i := range n {
		c.start(i)
	}
	c.waitMetaLeader()
	return c
}

// start starts node i (again) on its configuration and store, and waits
// until it takes clients.
func (c *procCluster) start(i int) {
	c.t.Helper()
	cmd := exec.Command(c.bin, "-c", c.confs[i])
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("node %s: %v", c.names[i], err)
	}
	c.procs[i] = cmd
	c.waitFor("node "+c.names[i]+" taking clients", func() bool {
		nc, err := nats.Connect(c.url(i), nats.NoReconnect())
		if err != nil {
			return false
		}
		nc.Close()
		return true
	})
}

// kill9 kills node i with SIGKILL and reaps it.
func (c *procCluster) kill9(i int) {
	if p := c.procs[i]; p != nil {
		_ = p.Process.Signal(syscall.SIGKILL)
		_ = p.Wait()
		c.procs[i] = nil
	}
}

// signal sends sig (SIGSTOP, SIGCONT) to node i.
func (c *procCluster) signal(i int, sig syscall.Signal) {
	if p := c.procs[i]; p != nil {
		_ = p.Process.Signal(sig)
	}
}

func (c *procCluster) url(i int) string { return fmt.Sprintf("nats://127.0.0.1:%d", c.ports[i]) }

func (c *procCluster) urls() string {
	var us []string
	for i := range c.ports {
		us = append(us, c.url(i))
	}
	return strings.Join(us, ",")
}

func (c *procCluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster: no %s after 30s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jsOn runs fn with JetStream on a fresh connection to every running node.
func (c *procCluster) jsOn(fn func(js jetstream.JetStream) bool) bool {
	var us []string
	for i, p := range c.procs {
		if p != nil {
			us = append(us, c.url(i))
		}
	}
	nc, err := nats.Connect(strings.Join(us, ","), nats.NoReconnect(), nats.Timeout(time.Second))
	if err != nil {
		return false
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return false
	}
	return fn(js)
}

// waitMetaLeader waits until JetStream answers: the cluster has a meta
// leader.
func (c *procCluster) waitMetaLeader() {
	c.t.Helper()
	c.waitFor("meta leader", func() bool {
		return c.jsOn(func(js jetstream.JetStream) bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := js.AccountInfo(ctx)
			return err == nil
		})
	})
}

// streamLeader waits until a running node leads the stream and returns it.
func (c *procCluster) streamLeader(stream string) int {
	c.t.Helper()
	at := -1
	c.waitFor("leader of stream "+stream, func() bool {
		return c.jsOn(func(js jetstream.JetStream) bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			s, err := js.Stream(ctx, stream)
			if err != nil {
				return false
			}
			info := s.CachedInfo()
			if info.Cluster == nil {
				return false
			}
			for i, n := range c.names {
				if n == info.Cluster.Leader && c.procs[i] != nil {
					at = i
					return true
				}
			}
			return false
		})
	})
	return at
}
