package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step"
)

// env is an embedded server on a fresh temporary directory.
type env struct {
	dir string
	srv *step.Embedded
	nc  *nats.Conn
	js  jetstream.JetStream
	pub *step.Publisher // raw environments only
}

func newEnv(ctx context.Context, o Options) (*env, error) {
	dir, err := os.MkdirTemp(o.Dir, "stepgate-bench-*")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(dir, "nats"), Sync: o.sync()})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e := &env{dir: dir, srv: srv}
	if e.nc, err = srv.Connect(); err != nil {
		e.close()
		return nil, err
	}
	if e.js, err = jetstream.New(e.nc); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	if e.nc != nil {
		e.nc.Close()
	}
	e.srv.Shutdown()
	os.RemoveAll(e.dir)
}

// host starts an engine host with the echo tools.
func (e *env) host(ctx context.Context) (*commands.Host, error) {
	return startBenchHost(ctx, e.js, filepath.Join(e.dir, "state"), 1)
}

// benchTools are the built-in tools and the benchmark's own, echo and echo_fx
// (test tools, which no production host installs by default).
func benchTools() ([]*executor.Tool, error) {
	tools, err := builtin.Tools()
	if err != nil {
		return nil, err
	}
	for _, build := range []func() (*executor.Tool, error){builtin.Echo, builtin.EchoFx} {
		t, err := build()
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// startBenchHost starts an engine host with the bench's tools (benchTools)
// on js, its checkpoints in stateDir, the stream with replicas.
func startBenchHost(ctx context.Context, js jetstream.JetStream, stateDir string, replicas int) (*commands.Host, error) {
	tools, err := benchTools()
	if err != nil {
		return nil, err
	}
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		return nil, err
	}
	return commands.StartHost(ctx, js, reg, commands.HostConfig{
		StateDir: stateDir, Stream: step.StreamConfig{Replicas: replicas}, Engine: commands.Config{Host: "bench"},
	})
}

// echoText is 200 random printable bytes, as the workloads ask.
func echoText() string {
	const printable = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 !#$%&()*+,-./:;<=>?@[]^_{|}~"
	b := make([]byte, 200)
	rand.Read(b)
	for i := range b {
		b[i] = printable[int(b[i])%len(printable)]
	}
	return string(b)
}
