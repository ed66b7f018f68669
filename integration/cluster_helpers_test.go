package integration

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/step"
	"go.uber.org/goleak"
)

// natsCluster is a JetStream cluster of real nats-server nodes in this
// process, routed on loopback, each with its store in a temporary directory.
// A node can be shut down and started again on the same ports and store.
type natsCluster struct {
	t     *testing.T
	opts  []*natsserver.Options
	nodes []*natsserver.Server // nil while a node is down
}

// startCluster starts n nodes and waits until they have a meta leader. The
// nodes are shut down when the test ends; the test then checks that no
// goroutine of theirs (or of its clients) is left.
func startCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	before := goleak.IgnoreCurrent() // the goroutines already running are not the cluster's
	c := &natsCluster{t: t, nodes: make([]*natsserver.Server, n)}
	routes := make([]string, n)
	clusterPorts := make([]int, n)
	for i := range n {
		clusterPorts[i] = freePort(t)
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", clusterPorts[i])
	}
	for i := range n {
		o := &natsserver.Options{
			ServerName:         fmt.Sprintf("n%d", i+1),
			Host:               "127.0.0.1",
			Port:               freePort(t),
			JetStream:          true,
			StoreDir:           t.TempDir(),
			JetStreamMaxMemory: 64 << 20,
			MaxPayload:         step.DefaultMaxMsgSize,
			NoSigs:             true,
			NoLog:              true,
			Cluster: natsserver.ClusterOpts{
				Name: "stepgate",
				Host: "127.0.0.1",
				Port: clusterPorts[i],
			},
			Routes: natsserver.RoutesFromStr(joinRoutes(routes)),
		}
		c.opts = append(c.opts, o)
	}
	t.Cleanup(func() {
		c.shutdownAll()
		goleak.VerifyNone(t, before)
	})
	for i := range n {
		c.start(i)
	}
	c.waitMetaLeader()
	return c
}

func joinRoutes(rs []string) string {
	s := rs[0]
	for _, r := range rs[1:] {
		s += "," + r
	}
	return s
}

// freePort returns a loopback port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	_, p, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// start starts node i (again) on its ports and store.
func (c *natsCluster) start(i int) {
	c.t.Helper()
	o := *c.opts[i]
	s, err := natsserver.NewServer(&o)
	if err != nil {
		c.t.Fatalf("node %d: %v", i+1, err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		s.Shutdown()
		c.t.Fatalf("node %d not ready for connections", i+1)
	}
	c.nodes[i] = s
}

// stop shuts node i down and waits until it has stopped.
func (c *natsCluster) stop(i int) {
	if s := c.nodes[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.nodes[i] = nil
	}
}

func (c *natsCluster) shutdownAll() {
	for i := range c.nodes {
		c.stop(i)
	}
}

// url returns node i's client URL.
func (c *natsCluster) url(i int) string {
	return fmt.Sprintf("nats://127.0.0.1:%d", c.opts[i].Port)
}

// connect opens a client connection to node i only.
func (c *natsCluster) connect(i int) *nats.Conn {
	c.t.Helper()
	nc, err := nats.Connect(c.url(i), nats.DontRandomize(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(nc.Close)
	return nc
}

// waitFor polls cond until it holds, failing the test after 30 s.
func (c *natsCluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("cluster: no %s after 30s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitMetaLeader waits until one running node is the meta leader and every
// running node is current with it.
func (c *natsCluster) waitMetaLeader() {
	c.t.Helper()
	c.waitFor("meta leader", func() bool {
		leader := false
		for _, s := range c.nodes {
			if s == nil {
				continue
			}
			if !s.JetStreamIsCurrent() {
				return false
			}
			leader = leader || s.JetStreamIsLeader()
		}
		return leader
	})
}

// streamLeader waits until a running node leads the stream and returns it.
func (c *natsCluster) streamLeader(stream string) int {
	c.t.Helper()
	at := -1
	c.waitFor("leader of stream "+stream, func() bool {
		for i, s := range c.nodes {
			if s != nil && s.JetStreamIsStreamLeader(natsserver.DEFAULT_GLOBAL_ACCOUNT, stream) {
				at = i
				return true
			}
		}
		return false
	})
	return at
}
