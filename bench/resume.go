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
	reexec := 0
	for range sz.rounds {
		d, n, err := resumeRound(ctx, o, self, sz, c)
		if err != nil {
			return nil, err
		}
		ms, reexec = append(ms, d), reexec+n
	}
	r := newResult(o)
	r["resume_ms"] = median(ms)
	r["resume_ms_runs"] = ms
	r["reexecutions"] = reexec
	r["prior_steps"], r["other_commits"] = sz.prior+sz.steps, sz.others
	if c != nil {
		r["nodes"], r["replicas"] = clusterNodes, clusterReplicas
	}
	return r, nil
}

// resumeRound runs processes A and B once and returns the ms from B's start
// to the approved call's result and B's re-executions. On a cluster the
// stream is deleted after.
func resumeRound(ctx context.Context, o Options, self string, sz resumeSizes, c *cluster) (float64, int, error) {
	dir, err := os.MkdirTemp(o.Dir, "stepgate-bench-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	common := []string{"--sync", o.sync()}
	dirA, dirB := dir, dir
	var natsA, natsB []string
	if c != nil {
		dirA, dirB = filepath.Join(dir, "a"), filepath.Join(dir, "b")
		natsA = []string{"--nats", c.urls[0], "--replicas", fmt.Sprint(clusterReplicas)}
		natsB = []string{"--nats", c.urls[1], "--replicas", fmt.Sprint(clusterReplicas)}
		defer func() {
			if nc, js, err := c.connect(0); err == nil {
				_ = deleteStream(context.WithoutCancel(ctx), js)
				nc.Close()
			}
		}()
	}
	a, err := proc(ctx, self, "a", slices.Concat(common, natsA, []string{"--dir", dirA, "--steps", fmt.Sprint(sz.steps),
		"--prior", fmt.Sprint(sz.prior), "--others", fmt.Sprint(sz.others)})...)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	b, err := proc(ctx, self, "b", slices.Concat(common, natsB, []string{"--dir", dirB, "--ticket", a.Ticket})...)
	if err != nil {
		return 0, 0, err
	}
	return round(float64(time.Unix(0, b.ResultAt).Sub(start)) / float64(time.Millisecond)), b.Reexecutions, nil
}
