package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// clusterNodes is the size of the cluster of c2 and c3.
const clusterNodes = 3

// cluster is a JetStream cluster of real nats-server nodes in this process,
// routed on loopback, each with its store in one temporary directory, which
// close removes.
type cluster struct {
	dir   string
	nodes []*natsserver.Server
	urls  []string
}

// startCluster starts clusterNodes nodes (with fsync on every write under
// --sync always) and waits until they have a meta leader.
func startCluster(ctx context.Context, o Options) (*cluster, error) {
	dir, err := os.MkdirTemp(o.Dir, "stepgate-bench-cluster-*")
	if err != nil {
		return nil, fmt.Errorf("bench cluster: %w", err)
	}
	c := &cluster{dir: dir}
	clientPorts, err := freePorts(clusterNodes)
	if err != nil {
		c.close()
		return nil, err
	}
	routePorts, err := freePorts(clusterNodes)
	if err != nil {
		c.close()
		return nil, err
	}
	routes := make([]string, clusterNodes)
	for i, p := range routePorts {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	for i := range clusterNodes {
		opts := &natsserver.Options{
			ServerName:         fmt.Sprintf("n%d", i+1),
			Host:               "127.0.0.1",
			Port:               clientPorts[i],
			JetStream:          true,
			StoreDir:           filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			JetStreamMaxMemory: 64 << 20,
			MaxPayload:         step.DefaultMaxMsgSize,
			SyncAlways:         o.sync() == step.SyncAlways,
			NoSigs:             true,
			NoLog:              true,
			Cluster:            natsserver.ClusterOpts{Name: "stepgate-bench", Host: "127.0.0.1", Port: routePorts[i]},
			Routes:             natsserver.RoutesFromStr(strings.Join(routes, ",")),
		}
		s, err := natsserver.NewServer(opts)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("bench cluster node %d: %w", i+1, err)
		}
		go s.Start()
		c.nodes = append(c.nodes, s)
		c.urls = append(c.urls, fmt.Sprintf("nats://127.0.0.1:%d", clientPorts[i]))
	}
	for i, s := range c.nodes {
		if !s.ReadyForConnections(30 * time.Second) {
			c.close()
			return nil, fmt.Errorf("bench cluster node %d: not ready for connections", i+1)
		}
	}
	if err := c.waitMetaLeader(ctx); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// freePorts returns n loopback ports nobody listens on, all different.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("bench: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitMetaLeader polls until one node is the meta leader, every node is
// current with it, and the leader sees every other node online (until it
// does, it refuses to place a stream on three replicas: "no suitable peers
// for placement, peer offline"): the cluster's start, before anything is
// measured.
func (c *cluster) waitMetaLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if c.peersOnline() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench cluster: no meta leader: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// connect opens a client connection to node i only.
func (c *cluster) connect(i int) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(c.urls[i], nats.DontRandomize(), nats.Name("stepgate-bench"))
	if err != nil {
		return nil, nil, fmt.Errorf("bench cluster: connect to node %d: %w", i+1, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// close shuts every node down and removes their stores.
func (c *cluster) close() {
	for _, s := range c.nodes {
		s.Shutdown()
	}
	for _, s := range c.nodes {
		s.WaitForShutdown()
	}
	os.RemoveAll(c.dir)
}

// peersOnline reports whether a meta leader exists, every node is current
// with it, and the leader sees all the other nodes online and current.
func (c *cluster) peersOnline() bool {
	var leader *natsserver.Server
	for _, s := range c.nodes {
		if !s.JetStreamIsCurrent() {
			return false
		}
		if s.JetStreamIsLeader() {
			leader = s
		}
	}
	if leader == nil {
		return false
	}
	info, err := leader.Jsz(&natsserver.JSzOptions{})
	if err != nil || info.Meta == nil || len(info.Meta.Replicas) != len(c.nodes)-1 {
		return false
	}
	for _, p := range info.Meta.Replicas {
		if p.Offline || !p.Current {
			return false
		}
	}
	return true
}
