package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// procReport is what a bench process prints.
type procReport struct {
	Run      string `json:"run,omitempty"`
	Ticket   string `json:"ticket,omitempty"`
	ResultAt int64  `json:"result_at,omitempty"` // unix ns when B had the approved call's result
	// When B's body began, was connected (its embedded server started,
	// on one node) and had its host started (checkpoint, catch-up), in
	// unix ns.
	BeganAt      int64 `json:"began_at,omitempty"`
	ConnectedAt  int64 `json:"connected_at,omitempty"`
	HostAt       int64 `json:"host_at,omitempty"`
	Reexecutions int   `json:"reexecutions"`
}

func proc(ctx context.Context, self, role string, args ...string) (*procReport, error) {
	cmd := exec.CommandContext(ctx, self, append([]string{ProcVerb, role}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("bench process %s: %w\n%s", role, err, errb.String())
	}
	var rep procReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("bench process %s printed %q: %w", role, out.String(), err)
	}
	return &rep, nil
}

// Proc is the body of a bench process (role a or b), run by the hidden verb.
func Proc(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("bench-proc: want a role")
	}
	role := args[0]
	fs := flag.NewFlagSet(ProcVerb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "data directory")
	sync := fs.String("sync", step.SyncInterval, "storage sync")
	steps := fs.Int("steps", 10, "echo steps before the ask")
	prior := fs.Int("prior", 0, "prior steps of the same run")
	others := fs.Int("others", 0, "commits of other runs")
	ticket := fs.String("ticket", "", "the ticket B approves")
	natsURL := fs.String("nats", "", "a NATS server of a cluster to connect to, instead of an embedded server")
	replicas := fs.Int("replicas", 1, "stream replicas")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	began := time.Now().UnixNano()
	var executions atomic.Int64
	reg, err := procRegistry(&executions)
	if err != nil {
		return err
	}
	nc, stop, err := procConnect(ctx, *natsURL, *dir, *sync)
	if err != nil {
		return err
	}
	defer stop()
	connected := time.Now().UnixNano()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	h, err := commands.StartHost(ctx, js, reg, commands.HostConfig{StateDir: filepath.Join(*dir, "state"),
		Stream: step.StreamConfig{Replicas: *replicas}, Engine: commands.Config{Host: "bench-" + role}})
	if err != nil {
		return err
	}
	defer h.Close()
	rep := procReport{BeganAt: began, ConnectedAt: connected, HostAt: time.Now().UnixNano()}
	switch role {
	case "a":
		rep, err = procA(ctx, h, *dir, *steps, *prior, *others)
	case "b":
		var res *commands.ReplyResult
		res, err = h.Reply(ctx, commands.ReplyRequest{Ticket: *ticket, Reply: "once", Principal: "bench"})
		if err == nil && (res.Outcome == nil || res.Outcome.Results[0].IsError) {
			err = fmt.Errorf("the approved call did not run: %+v", res)
		}
		rep.ResultAt = time.Now().UnixNano()
		rep.Reexecutions = int(executions.Load()) - 1 // less the approved call
	default:
		err = fmt.Errorf("bench-proc: unknown role %q", role)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(rep)
}

// procConnect connects a bench process to natsURL, or (without one) to an
// embedded server on dir; stop closes the connection and stops that server.
func procConnect(ctx context.Context, natsURL, dir, sync string) (nc *nats.Conn, stop func(), err error) {
	if natsURL != "" {
		nc, err := nats.Connect(natsURL, nats.DontRandomize(), nats.Name("stepgate-bench"))
		if err != nil {
			return nil, nil, fmt.Errorf("bench-proc: connect to %s: %w", natsURL, err)
		}
		return nc, nc.Close, nil
	}
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(dir, "nats"), Sync: sync})
	if err != nil {
		return nil, nil, err
	}
	if nc, err = srv.Connect(); err != nil {
		srv.Shutdown()
		return nil, nil, err
	}
	return nc, func() { nc.Close(); srv.Shutdown() }, nil
}

// procA makes the history: other runs' commits, then the run with its prior
// steps, its echo steps and finally the call that asks.
func procA(ctx context.Context, h *commands.Host, dir string, steps, prior, others int) (procReport, error) {
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return procReport{}, err
	}
	if err := os.WriteFile(filepath.Join(ws, "old.log"), []byte("old\n"), 0o600); err != nil {
		return procReport{}, err
	}
	const perRun = 100
	for made := 0; made < others; made += perRun {
		n := min(perRun, others-made) - 1 // the start commit is one of them
		sc, err := newScriptAt(ctx, h, ws, "echo", max(n, 1))
		if err != nil {
			return procReport{}, err
		}
		if _, err := sc.drive(ctx, h); err != nil {
			return procReport{}, err
		}
	}
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: ws,
		Rules: []gate.Rule{{Action: "delete_file", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		return procReport{}, err
	}
	sc, err := scriptFor(info.Run, "echo", prior+steps)
	if err != nil {
		return procReport{}, err
	}
	if _, err := sc.drive(ctx, h); err != nil {
		return procReport{}, err
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: prior + steps + 1,
		Calls: []commands.CallRequest{{ID: "del", Tool: "delete_file", Args: json.RawMessage(`{"path":"old.log"}`)}}})
	if err != nil {
		return procReport{}, err
	}
	if out.Final || len(out.Tickets) != 1 {
		return procReport{}, fmt.Errorf("the delete_file call did not ask: %+v", out)
	}
	return procReport{Run: info.Run, Ticket: out.Tickets[0].ID}, nil
}

// procRegistry is the bench's tools (echo counting its executions) and
// delete_file, a side-effecting tool that removes a file in the location.
func procRegistry(executions *atomic.Int64) (*executor.Registry, error) {
	type echoIn = builtin.EchoInput
	echo, err := executor.New("echo", "Return the given text unchanged.",
		func(_ context.Context, _ executor.Call, in echoIn) (string, error) {
			executions.Add(1)
			return in.Text, nil
		}, executor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		return nil, err
	}
	type deleteIn struct {
		Path string `json:"path"`
	}
	del, err := executor.New("delete_file", "Delete a file in the workspace.",
		func(_ context.Context, c executor.Call, in deleteIn) (string, error) {
			executions.Add(1)
			if err := os.Remove(filepath.Join(c.Location, filepath.Clean("/"+in.Path))); err != nil {
				return "", err
			}
			return "deleted " + in.Path, nil
		}, executor.WithEffect(descriptor.SideEffecting),
		executor.WithRequests(func(_ executor.Call, in deleteIn) ([]descriptor.Request, error) {
			return []descriptor.Request{{Action: "delete_file", Resources: []string{in.Path}, Save: []string{"*"}}}, nil
		}))
	if err != nil {
		return nil, err
	}
	tools := []*executor.Tool{echo, del}
	others, err := benchTools()
	if err != nil {
		return nil, err
	}
	for _, t := range others {
		if !slices.ContainsFunc(tools, func(x *executor.Tool) bool { return x.Name() == t.Name() }) {
			tools = append(tools, t)
		}
	}
	return executor.NewRegistry(tools...)
}
