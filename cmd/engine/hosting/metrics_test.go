package hosting

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stepgate/stepgate/cmd/engine/hosting/metricstest"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// Two hosts' metrics in one process do not mix: each has its own registry.
func TestHostMetricsAreOneRegistryEach(t *testing.T) {
	r1, r2 := prometheus.NewRegistry(), prometheus.NewRegistry()
	m1, err := newHostMetrics(r1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newHostMetrics(r2); err != nil {
		t.Fatalf("a second host's metrics: %v", err)
	}
	m1.Commit(events.KindStep, false)
	count := func(r *prometheus.Registry) float64 {
		fams, err := r.Gather()
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*dto.MetricFamily{}
		for _, f := range fams {
			byName[f.GetName()] = f
		}
		return metricstest.Sample(byName, "stepgate_commits_total", "kind", "step")
	}
	if got1, got2 := count(r1), count(r2); got1 != 1 || got2 != 0 {
		t.Errorf("step commits: host 1 %v, host 2 %v; want 1 and 0", got1, got2)
	}
}

// The step path's observations allocate nothing once a tool has run.
func TestHostMetricsDoNotAllocate(t *testing.T) {
	m, err := newHostMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var obs commands.Metrics = m
	obs.ToolDone("echo", time.Millisecond)
	allocs := testing.AllocsPerRun(1000, func() {
		obs.Commit(events.KindStep, false)
		obs.Commit(events.KindSettle, true)
		obs.Verdict(events.VerdictAllow)
		obs.ToolDone("echo", time.Millisecond)
		obs.Resumed(time.Millisecond)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per step's observations, want 0", allocs)
	}
}

// BenchmarkSubmitStepMetrics is BenchmarkSubmitStep (commands) on a host of
// this binary, without metrics and with them: what instrumentation costs a
// one-call read-only step. -count alternates the two.
func BenchmarkSubmitStepMetrics(b *testing.B) {
	for _, with := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "prometheus"}[with], func(b *testing.B) {
			ctx := context.Background()
			opts := Options{DataDir: b.TempDir(), HostName: "bench", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if with {
				m, err := newHostMetrics(prometheus.NewRegistry())
				if err != nil {
					b.Fatal(err)
				}
				opts.Metrics = m
			}
			e, err := StartEmbedded(ctx, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			info, err := e.Host.StartRun(ctx, commands.StartRunRequest{Location: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"text": strings.Repeat("x", 200)})
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				if _, err := e.Host.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: n,
					Calls: []commands.CallRequest{{ID: "c1", Tool: "echo", Args: args}}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStepObservations is what a one-call step's metrics cost: a
// commit, its verdict and the tool's run.
func BenchmarkStepObservations(b *testing.B) {
	m, err := newHostMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	var obs commands.Metrics = m
	b.ReportAllocs()
	for b.Loop() {
		obs.Commit(events.KindStep, false)
		obs.Verdict(events.VerdictAllow)
		obs.ToolDone("echo", time.Millisecond)
	}
}

// A scrape while the host cannot reach NATS still answers with what the
// projection holds; only the lag, which asks the stream, is left out. The
// host's lease: held, one takeover counted when another host's lease
// expires, and not held once the host cannot renew it.
func TestScrapeWithoutNATSServesTheProjection(t *testing.T) {
	s := steptest.Start(t, "")
	reg, err := tools(false, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := commands.StartHost(ctx, s.JS, reg, commands.HostConfig{StateDir: t.TempDir(), Lease: commands.LeaseConfig{TTL: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	leases, err := step.OpenLeases(ctx, s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	pr := prometheus.NewRegistry()
	if err := pr.Register(newBacklogCollector(h, time.Now)); err != nil {
		t.Fatal(err)
	}
	srv, err := listenMetrics("127.0.0.1:0", pr, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.run() }()
	fams := metricstest.Scrape(t, srv.URL())
	if got := metricstest.Sample(fams, "stepgate_projector_lag_sequences"); got != 0 {
		t.Errorf("lag with NATS up = %v, want 0", got)
	}
	if held, took := metricstest.Sample(fams, "stepgate_lease_held"), metricstest.Sample(fams, "stepgate_lease_takeovers_total"); held != 1 || took != 0 {
		t.Errorf("lease held %v, takeovers %v; want 1 and 0", held, took)
	}
	// A host whose renewals stopped: taken over once its lease expired.
	if _, err := leases.Put(ctx, step.Lease{Host: "gone", State: step.LeaseHeld, By: "gone", At: time.Now()}, 0); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); metricstest.Sample(metricstest.Scrape(t, srv.URL()), "stepgate_lease_takeovers_total") != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no takeover counted of the expired lease")
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		rec, err := leases.Get(ctx, "gone")
		if err == nil && rec.State == step.LeaseSettled && rec.By != "gone" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gone's record %+v, %v; want settled by the host that took it over", rec, err)
		}
	}
	s.Conn.Close()
	for deadline := time.Now().Add(10 * time.Second); metricstest.Sample(metricstest.Scrape(t, srv.URL()), "stepgate_lease_held") != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lease is still held without NATS")
		}
	}
	fams = metricstest.Scrape(t, srv.URL())
	if got := metricstest.Sample(fams, "stepgate_projector_lag_sequences"); got != -1 {
		t.Errorf("lag without NATS = %v, want it left out", got)
	}
	if got := metricstest.Sample(fams, "stepgate_tickets_pending"); got != 0 {
		t.Errorf("tickets pending without NATS = %v, want 0 from the projection", got)
	}
	srv.stop(nil)
	if err := <-served; err != nil {
		t.Errorf("metrics server: %v", err)
	}
}
