package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// waitSizes are w6's: waiting runs, approvals, requests in flight while
// the runs are made.
type waitSizes struct{ runs, approvals, inFlight int }

func (o Options) waitSizes() waitSizes {
	if o.Quick {
		return waitSizes{runs: 5000, approvals: 1000, inFlight: 256}
	}
	return waitSizes{runs: 100000, approvals: 1000, inFlight: 256}
}

// ticketsPageTimeout bounds the first tickets page: the operator
// gave up after 30 s.
const ticketsPageTimeout = 30 * time.Second

// runW6 is waiting at scale: one `engine serve` process, runs runs each
// with one step whose call (echo, which the run's rules ask for) waits on a
// ticket; the host's RSS; SIGKILL and a restart on the same data directory,
// timed from the restart to the first request answered; the first page of
// the pending tickets; then approvals of as many tickets, all at once.
func runW6(ctx context.Context, o Options) (Result, error) {
	bin, err := o.binary()
	if err != nil {
		return nil, err
	}
	sz := o.waitSizes()
	dir, err := os.MkdirTemp(o.Dir, "stepgate-bench-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	data, ws := filepath.Join(dir, "data"), filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return nil, err
	}
	// The host is an engine process connected to a NATS server of its own,
	// as a fleet's hosts are (here in the bench's process): the host's RSS
	// is the engine's, and SIGKILL kills the engine, not the log.
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(dir, "nats"), Listen: "127.0.0.1:0", Sync: o.sync()})
	if err != nil {
		return nil, err
	}
	defer srv.Shutdown()
	url := srv.ClientURL()

	p, err := startServe(bin, data, "--nats", url)
	if err != nil {
		return nil, err
	}
	defer func() { p.stop() }()
	probe := func(nc *nats.Conn) error {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return call(pctx, nc, "tickets", commands.TicketsRequest{Run: "none"}, nil)
	}
	nc, err := waitServing(ctx, p, url, probe)
	if err != nil {
		return nil, err
	}
	progress(o, "w6: making %d waiting runs", sz.runs)
	start := time.Now()
	tickets, err := makeWaiting(ctx, nc, ws, sz)
	nc.Close()
	if err != nil {
		return nil, errors.Join(err, p.exited())
	}
	made := time.Since(start)
	r := newResult(o)
	r["runs"] = sz.runs
	r["runs_per_s"] = perSecond(sz.runs, made)
	if r["rss_mb"], err = p.rssMB(); err != nil {
		return nil, err
	}

	p.kill()
	r["checkpoint_mb"] = dirMB(filepath.Join(data, "state"))
	progress(o, "w6: %d runs waiting after %s (%v runs/s), RSS %v MB, checkpoint %v MB; SIGKILL and restart",
		sz.runs, made.Round(time.Millisecond), r["runs_per_s"], r["rss_mb"], r["checkpoint_mb"])
	restart := time.Now()
	if p, err = startServe(bin, data, "--nats", url); err != nil {
		return nil, err
	}
	if nc, err = waitServing(ctx, p, url, probe); err != nil {
		return nil, fmt.Errorf("restart after SIGKILL: %w", err)
	}
	defer nc.Close()
	r["ready_ms"] = ms(time.Since(restart))
	progress(o, "w6: serving again after %s", time.Since(restart).Round(time.Millisecond))
	if r["rss_restarted_mb"], err = p.rssMB(); err != nil {
		return nil, err
	}

	page, n, err := ticketsPage(ctx, nc)
	r["tickets_page_ms"], r["tickets_page_count"] = ms(page), n
	if err != nil {
		r["tickets_page_error"] = err.Error()
	}

	w, err := approveAll(ctx, nc, tickets[:min(sz.approvals, len(tickets))])
	if err != nil {
		return nil, errors.Join(err, p.exited())
	}
	r["approvals"] = w.n
	r["approvals_per_s"] = w.rate()
	return r, nil
}

// makeWaiting starts sz.runs runs, each asking for its echo calls, and
// submits each one step with one echo call, with sz.inFlight runs being
// made at once. It returns every run's ticket.
func makeWaiting(ctx context.Context, nc *nats.Conn, ws string, sz waitSizes) ([]string, error) {
	rules := []gate.Rule{{Action: "echo", Resource: "*", Effect: gate.Ask}}
	tickets := make([]string, sz.runs)
	var next atomic.Int64
	errs := make([]error, sz.inFlight)
	var wg sync.WaitGroup
	for w := range sz.inFlight {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < sz.runs && errs[w] == nil; i = int(next.Add(1)) - 1 {
				tickets[i], errs[w] = makeOneWaiting(ctx, nc, ws, rules)
			}
		})
	}
	wg.Wait()
	return tickets, errors.Join(errs...)
}

func makeOneWaiting(ctx context.Context, nc *nats.Conn, ws string, rules []gate.Rule) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var info struct {
		Run string `json:"run"`
	}
	if err := call(ctx, nc, "start_run", commands.StartRunRequest{Location: ws, Rules: rules}, &info); err != nil {
		return "", err
	}
	args, _ := json.Marshal(map[string]string{"text": echoText()})
	var out commands.StepOutcome
	err := call(ctx, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}, &out)
	if err != nil {
		return "", err
	}
	if out.Final || len(out.Tickets) != 1 {
		return "", fmt.Errorf("run %s: the echo call did not ask: %+v", info.Run, out)
	}
	return out.Tickets[0].ID, nil
}

// ticketsPage asks for the first page of 100 pending tickets and returns
// how long the answer took and how many tickets it held. A host that does
// not page yet refuses the limit (invalid_input); it is then asked for its
// whole list, which is its first page, as a bare array.
func ticketsPage(ctx context.Context, nc *nats.Conn) (time.Duration, int, error) {
	ask := func(req any) (time.Duration, int, error) {
		ctx, cancel := context.WithTimeout(ctx, ticketsPageTimeout)
		defer cancel()
		var raw json.RawMessage
		start := time.Now()
		err := call(ctx, nc, "tickets", req, &raw)
		d := time.Since(start)
		if err != nil {
			return d, 0, err
		}
		var page struct {
			Tickets []json.RawMessage `json:"tickets"`
		}
		if json.Unmarshal(raw, &page) == nil && page.Tickets != nil {
			return d, len(page.Tickets), nil
		}
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return d, 0, fmt.Errorf("tickets: neither a page nor a list: %w", err)
		}
		return d, len(list), nil
	}
	d, n, err := ask(map[string]int{"limit": 100})
	if se := (*serviceError)(nil); errors.As(err, &se) && se.code == commands.CodeInvalidInput {
		return ask(struct{}{})
	}
	return d, n, err
}

// approveAll approves every ticket at once (the service takes as many as
// it handles at a time) and returns the window.
func approveAll(ctx context.Context, nc *nats.Conn, tickets []string) (window, error) {
	errs := make([]error, len(tickets))
	return timed(len(tickets), func() error {
		var wg sync.WaitGroup
		for i, t := range tickets {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				var res commands.ReplyResult
				errs[i] = call(ctx, nc, "reply", commands.ReplyRequest{Ticket: t, Reply: "once", Principal: "bench"}, &res)
				if errs[i] == nil && (!res.Approved || res.Outcome == nil || res.Outcome.Results[0].IsError) {
					errs[i] = fmt.Errorf("ticket %s: the approved call did not run: %+v", t, res)
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}

// progress tells the person waiting for a long workload where it is.
func progress(o Options, format string, args ...any) {
	if o.Stderr != nil {
		fmt.Fprintf(o.Stderr, format+"\n", args...)
	}
}
