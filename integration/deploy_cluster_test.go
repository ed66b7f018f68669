package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/step"
)

// deployPasswords are the users' passwords of deploy/access/accounts.conf,
// which reads them from the environment.
var deployPasswords = map[string]string{
	"engine": "deploy-engine-pw", "agent": "deploy-agent-pw",
	"approver": "deploy-approver-pw", "operator": "deploy-operator-pw",
}

// deployCluster is deploy/cluster as shipped, started in a temporary
// directory: three nats-server processes on n1.conf, n2.conf and n3.conf,
// their includes (../access/accounts.conf) and the certificates mkcerts
// made. Only the ports are changed, to free ones.
type deployCluster struct {
	dir   string // the copy of deploy/: dir/cluster, dir/access
	ca    string
	ports []int // client ports, n1..n3
	pw    map[string]string
}

// startDeployCluster copies the shipped files, makes the certificates
// with the shipped script and starts the three nodes from the cluster
// directory, as docs/deploy.md says, and waits until JetStream answers
// the engine user over TLS.
func startDeployCluster(t *testing.T) *deployCluster {
	t.Helper()
	bin, err := natsServerBin()
	if err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs(filepath.Join("..", "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	d := &deployCluster{dir: t.TempDir(), pw: map[string]string{}}
	cluster := filepath.Join(d.dir, "cluster")
	for _, sub := range []string{"cluster", "access"} {
		if err := os.MkdirAll(filepath.Join(d.dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, filepath.Join(src, "access", "accounts.conf"), filepath.Join(d.dir, "access", "accounts.conf"))
	// Each shipped port is replaced by a free one; a port the files no
	// longer name fails the test rather than testing something else.
	var confs []string
	for i := 1; i <= 3; i++ {
		b, err := os.ReadFile(filepath.Join(src, "cluster", fmt.Sprintf("n%d.conf", i)))
		if err != nil {
			t.Fatal(err)
		}
		confs = append(confs, string(b))
	}
	for _, base := range []int{4222, 8222, 6222} {
		for i := range 3 {
			old := fmt.Sprintf("127.0.0.1:%d", base+i)
			port := freePort(t)
			if base == 4222 {
				d.ports = append(d.ports, port)
			}
			found := false
			for j := range confs {
				found = found || strings.Contains(confs[j], old)
				confs[j] = strings.ReplaceAll(confs[j], old, fmt.Sprintf("127.0.0.1:%d", port))
			}
			if !found {
				t.Fatalf("deploy/cluster no longer names %s", old)
			}
		}
	}
	for i, c := range confs {
		if err := os.WriteFile(filepath.Join(cluster, fmt.Sprintf("n%d.conf", i+1)), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mk := exec.Command(filepath.Join(src, "cluster", "mkcerts"), filepath.Join(cluster, "certs"))
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("mkcerts: %v\n%s", err, out)
	}
	d.ca = filepath.Join(cluster, "certs", "ca.pem")
	env := os.Environ()
	for user, pw := range deployPasswords {
		d.pw[user] = writeTemp(t, user+".pw", pw+"\n")
		env = append(env, "STEPGATE_"+strings.ToUpper(user)+"_PASSWORD="+pw)
	}
	for i := 1; i <= 3; i++ {
		cmd := exec.Command(bin, "-c", fmt.Sprintf("n%d.conf", i))
		cmd.Dir, cmd.Env = cluster, env
		var logs bytes.Buffer
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("node n%d: %v", i, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("node n%d:\n%s", i, logs.String())
			}
		})
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := d.jetStreamAnswers()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the deploy cluster's JetStream did not answer the engine user over TLS within 60s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return d
}

// urls are the nodes' client URLs, TLS.
func (d *deployCluster) urls() string {
	var us []string
	for _, p := range d.ports {
		us = append(us, fmt.Sprintf("tls://127.0.0.1:%d", p))
	}
	return strings.Join(us, ",")
}

// jetStreamAnswers connects as the engine user, over TLS with the CA, and
// asks JetStream for the account's information.
func (d *deployCluster) jetStreamAnswers() error {
	nc, err := nats.Connect(d.urls(), nats.UserInfo("engine", deployPasswords["engine"]), nats.RootCAs(d.ca),
		nats.NoReconnect(), nats.Timeout(2*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}

// clientFlags are a role's connection flags, as docs/deploy.md gives them.
func (d *deployCluster) clientFlags(role string) []string {
	return []string{"--nats", d.urls(), "--tls-ca", d.ca, "--user", role, "--password-file", d.pw[role], "--inbox-prefix", "_INBOX." + role}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// The deploy configuration as shipped starts and serves: three nats-server
// nodes on deploy/cluster's files (accounts from deploy/access, TLS for
// clients and routes, certificates from mkcerts), two `engine serve` hosts
// as the engine user over TLS with a password file, and an `engine run` as
// the agent user that completes; the approver lists it. The stream has
// three replicas, one on each node (the routes, mutual TLS, formed the
// cluster). A client that does not trust the cluster's CA, and one with
// a wrong password, are refused.
func TestDeployClusterServesARun(t *testing.T) {
	d := startDeployCluster(t)
	hostFlags := []string{"--tls-ca", d.ca, "--user", "engine", "--password-file", d.pw["engine"], "--replicas", "3"}
	a := startFleetHost(t, d.urls(), "deploy-a", "", hostFlags...)
	b := startFleetHost(t, d.urls(), "deploy-b", "", hostFlags...)

	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("Ship the release on Friday.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeTemp(t, "steps.jsonl", `{"calls":[{"id":"c1","tool":"read","args":{"path":"notes.txt"}}]}
{"calls":[{"id":"c2","tool":"grep","args":{"pattern":"Friday"}}]}
`)
	out := engine(t, append([]string{"run", "--script", script, "--location", ws}, d.clientFlags("agent")...)...)
	m := regexp.MustCompile(`run ([0-9A-Z]{26}) ended: completed after 2 steps`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("engine run as agent did not complete:\n%s\nhost a:\n%s\nhost b:\n%s", out, a.logs(), b.logs())
	}
	if !strings.Contains(out, "Ship the release on Friday.") {
		t.Errorf("the read's result is not in the run's output:\n%s", out)
	}
	runs := engine(t, append([]string{"runs"}, d.clientFlags("approver")...)...)
	if !strings.Contains(runs, m[1]) {
		t.Errorf("engine runs as approver does not list %s:\n%s", m[1], runs)
	}

	nc, err := nats.Connect(d.urls(), nats.UserInfo("engine", deployPasswords["engine"]), nats.RootCAs(d.ca))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, step.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Errorf("stream %s: replicas %d, cluster %+v; want 3 replicas, a leader and two followers", step.DefaultStream, info.Config.Replicas, info.Cluster)
	}

	if nc, err := nats.Connect(d.urls(), nats.UserInfo("agent", deployPasswords["agent"]), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Error("a client that does not trust the cluster's CA connected")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA: %v, want a certificate error", err)
	}
	if nc, err := nats.Connect(d.urls(), nats.UserInfo("agent", "not-the-password"), nats.RootCAs(d.ca), nats.NoReconnect()); err == nil {
		nc.Close()
		t.Error("a client with a wrong password connected")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a wrong password: %v, want an authorization error", err)
	}
}
