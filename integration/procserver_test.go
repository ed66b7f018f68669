package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stepgate/stepgate/step"
)

// startProcServer starts one nats-server process with JetStream (no
// cluster) and its monitoring endpoint, as a procCluster of one node.
func startProcServer(t *testing.T) *procCluster {
	t.Helper()
	bin, err := natsServerBin()
	if err != nil {
		t.Fatal(err)
	}
	c := &procCluster{t: t, bin: bin, procs: make([]*exec.Cmd, 1), names: []string{"n1"},
		ports: []int{freePort(t)}, mons: []int{freePort(t)}}
	dir := t.TempDir()
	conf := filepath.Join(dir, "n1.conf")
	text := fmt.Sprintf(`server_name: n1
listen: "127.0.0.1:%d"
http: "127.0.0.1:%d"
max_payload: %d
jetstream {
  store_dir: %q
  max_memory_store: 64MB
}
`, c.ports[0], c.mons[0], step.DefaultMaxMsgSize, filepath.Join(dir, "n1"))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c.confs = []string{conf}
	t.Cleanup(func() {
		c.signal(0, syscall.SIGCONT)
		c.kill9(0)
	})
	c.start(0)
	c.waitMetaLeader()
	return c
}
