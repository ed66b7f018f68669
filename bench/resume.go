package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ProcVerb is the hidden verb under which the benchmark re-executes its own
// binary for the separate processes of w3, w4 and c3.
const ProcVerb = "bench-proc"

// resumeSizes are w3's and w4's: rounds, steps before the ask, prior steps
// of the same run, commits of other runs.
type resumeSizes struct{ rounds, steps, prior, others int }

func (o Options) resumeSizes() resumeSizes {
	sz := resumeSizes{rounds: 5, steps: 10, prior: 10000, others: 100000}
	if o.Quick {
		sz.rounds, sz.prior, sz.others = 1, 1000, 10000
	}
	if o.Workload == "w3" || o.Workload == "c3" {
		sz.prior, sz.others = 0, 0
	}
	return sz
}

// runResume is w3 and w4: process A drives a run to a call that asks and
// exits; process B, a fresh process on the same data directory, starts,
// finds the waiting run, approves the ticket, and the call runs. Reported:
// the time from B's start to the approved call's result (median of the
// rounds), and how many calls B ran besides the approved one (must be 0).
// c3 is w3 on a three-node cluster with an R3 stream: A connects to the
// first node, B (another host, with its own state directory) to the second.
func runResume(ctx context.Context, o Options) (Result, error) {
	self, err := o.binary()
	if err != nil {
		return nil, err
	}
	var c *cluster
	if o.Workload == "c3" {
		if c, err = startCluster(ctx, o); err != nil {
			return nil, err
		}
		defer c.close()
	}
	sz := o.resumeSizes()
	var ms []float64
	var phases [4][]float64
	reexec := 0
	for range sz.rounds {
		d, ph, n, err := resumeRound(ctx, o, self, sz, c)
		if err != nil {
			return nil, err
		}
		ms, reexec = append(ms, d), reexec+n
		for i := range phases {
			phases[i] = append(phases[i], ph[i])
		}
	}
	r := newResult(o)
	r["resume_ms"] = median(ms)
	r["resume_ms_runs"] = ms
	r["reexecutions"] = reexec
	r["prior_steps"], r["other_commits"] = sz.prior+sz.steps, sz.others
	// Where B's time went (medians): from its start to its body running
	// (the process's exec and the Go runtime's start), to a connection
	// (an embedded server started, or a node reached), to its host
	// started, to the approved call's result.
	r["b_exec_ms"], r["b_connect_ms"], r["b_host_ms"], r["b_reply_ms"] =
		median(phases[0]), median(phases[1]), median(phases[2]), median(phases[3])
	if c != nil {
		r["nodes"], r["replicas"] = clusterNodes, clusterReplicas
	}
	return r, nil
}

// resumeRound runs processes A and B once and returns the ms from B's start
// to the approved call's result, that time's phases (see runResume) and B's
// re-executions. On a cluster the rounds share the stream (each round's A
// and B are new hosts, with new state directories).
func resumeRound(ctx context.Context, o Options, self string, sz resumeSizes, c *cluster) (float64, [4]float64, int, error) {
	var ph [4]float64
	dir, err := os.MkdirTemp(o.Dir, "stepgate-bench-*")
	if err != nil {
		return 0, ph, 0, err
	}
	defer os.RemoveAll(dir)
	common := []string{"--sync", o.sync()}
	dirA, dirB := dir, dir
	var natsA, natsB []string
	if c != nil {
		dirA, dirB = filepath.Join(dir, "a"), filepath.Join(dir, "b")
		natsA = []string{"--nats", c.urls[0], "--replicas", fmt.Sprint(clusterReplicas)}
		natsB = []string{"--nats", c.urls[1], "--replicas", fmt.Sprint(clusterReplicas)}
	}
	a, err := proc(ctx, self, "a", slices.Concat(common, natsA, []string{"--dir", dirA, "--steps", fmt.Sprint(sz.steps),
		"--prior", fmt.Sprint(sz.prior), "--others", fmt.Sprint(sz.others)})...)
	if err != nil {
		return 0, ph, 0, err
	}
	start := time.Now()
	b, err := proc(ctx, self, "b", slices.Concat(common, natsB, []string{"--dir", dirB, "--ticket", a.Ticket})...)
	if err != nil {
		return 0, ph, 0, err
	}
	since := func(from time.Time, ns int64) float64 {
		return round(float64(time.Unix(0, ns).Sub(from)) / float64(time.Millisecond))
	}
	ph = [4]float64{since(start, b.BeganAt), since(time.Unix(0, b.BeganAt), b.ConnectedAt),
		since(time.Unix(0, b.ConnectedAt), b.HostAt), since(time.Unix(0, b.HostAt), b.ResultAt)}
	return since(start, b.ResultAt), ph, b.Reexecutions, nil
}
