package hosting

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stepgate/stepgate/events"
)

// hostMetrics is commands.Metrics on one host's Prometheus registry. Every
// label child the step path uses is resolved once (a tool's at its first
// run), so an observation is a map read and an atomic add: no allocation.
type hostMetrics struct {
	commitVec, conflictVec *prometheus.CounterVec
	forwardVec, noExecVec  *prometheus.CounterVec             // by location: a host's are few
	commits, conflicts     map[events.Kind]prometheus.Counter // read-only after newHostMetrics
	verdicts               map[string]prometheus.Counter      // read-only after newHostMetrics
	resume                 prometheus.Histogram
	toolVec                *prometheus.HistogramVec

	mu    sync.RWMutex
	tools map[string]prometheus.Observer // a tool's child, once it ran
}

// durationBuckets span a read-only call's 100µs to a long bash's minutes.
func durationBuckets() []float64 { return prometheus.ExponentialBuckets(0.0001, 4, 12) }

// newHostMetrics registers a host's metrics on reg.
func newHostMetrics(reg prometheus.Registerer) (*hostMetrics, error) {
	m := &hostMetrics{
		commitVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_commits_total",
			Help: "Commits this host appended to the log, by kind."}, []string{"kind"}),
		conflictVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_commit_conflicts_total",
			Help: "Commits of this host the log refused because another commit of the subject came first (lost races), by kind."}, []string{"kind"}),
		resume: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "stepgate_resume_latency_seconds",
			Help:    "From a reply approving a call arriving at this host to the call's result committed.",
			Buckets: durationBuckets()}),
		toolVec: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "stepgate_tool_duration_seconds",
			Help: "How long calls ran on this host, by tool.", Buckets: durationBuckets()}, []string{"tool"}),
		forwardVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_forwarded_total",
			Help: "Requests this host sent to the host that holds the run's location (placement), by location."}, []string{"location"}),
		noExecVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_no_executor_total",
			Help: "Requests this host answered no_executor: no live host held the run's location, by location."}, []string{"location"}),
		commits: map[events.Kind]prometheus.Counter{}, conflicts: map[events.Kind]prometheus.Counter{},
		verdicts: map[string]prometheus.Counter{}, tools: map[string]prometheus.Observer{},
	}
	verdictVec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_verdicts_total",
		Help: "Permission verdicts this host committed, by verdict (allow, block, confirm, reject)."}, []string{"verdict"})
	for _, c := range []prometheus.Collector{m.commitVec, m.conflictVec, verdictVec, m.resume, m.toolVec, m.forwardVec, m.noExecVec} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	// Every kind and verdict the engine commits has its counter from the
	// start, at 0.
	for _, k := range []events.Kind{events.KindStart, events.KindCatalog, events.KindDecide, events.KindSettle, events.KindStep,
		events.KindResolve, events.KindEnd, events.KindGrant, events.KindRecover, events.KindSweep, events.KindRegistry, events.KindTurn} {
		m.commits[k], m.conflicts[k] = m.commitVec.WithLabelValues(string(k)), m.conflictVec.WithLabelValues(string(k))
	}
	for _, v := range []string{events.VerdictAllow, events.VerdictBlock, events.VerdictConfirm, events.VerdictReject} {
		m.verdicts[v] = verdictVec.WithLabelValues(v)
	}
	return m, nil
}

// Commit counts a commit appended, or lost to another.
func (m *hostMetrics) Commit(kind events.Kind, conflict bool) {
	pre, vec := m.commits, m.commitVec
	if conflict {
		pre, vec = m.conflicts, m.conflictVec
	}
	if c, ok := pre[kind]; ok {
		c.Inc()
		return
	}
	vec.WithLabelValues(string(kind)).Inc() // a kind newer than this list
}

// Verdict counts a committed verdict; there are four.
func (m *hostMetrics) Verdict(v string) {
	if c, ok := m.verdicts[v]; ok {
		c.Inc()
	}
}

// ToolDone observes how long a call of tool ran.
func (m *hostMetrics) ToolDone(tool string, took time.Duration) {
	m.mu.RLock()
	o, ok := m.tools[tool]
	m.mu.RUnlock()
	if !ok {
		m.mu.Lock()
		if o, ok = m.tools[tool]; !ok {
			o = m.toolVec.WithLabelValues(tool)
			m.tools[tool] = o
		}
		m.mu.Unlock()
	}
	o.Observe(took.Seconds())
}

// Resumed observes a resume's latency.
func (m *hostMetrics) Resumed(took time.Duration) { m.resume.Observe(took.Seconds()) }

// Forwarded counts a request sent to the holder of location.
func (m *hostMetrics) Forwarded(location string) { m.forwardVec.WithLabelValues(location).Inc() }

// NoExecutor counts a no_executor answer for location.
func (m *hostMetrics) NoExecutor(location string) { m.noExecVec.WithLabelValues(location).Inc() }
