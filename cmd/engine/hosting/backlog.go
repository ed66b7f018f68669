package hosting

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stepgate/stepgate/commands"
)

// lagTimeout bounds the stream look-up a scrape makes for the projector's
// lag: a scrape never hangs on an unavailable NATS.
const lagTimeout = 2 * time.Second

// backlogCollector reads what a host has waiting at scrape time, from its
// projection: nothing is kept up per step.
type backlogCollector struct {
	host                                    *commands.Host
	clock                                   func() time.Time
	pending, oldest, lag, applied, quarants *prometheus.Desc
	leaseHeld, takeovers                    *prometheus.Desc
}

func newBacklogCollector(h *commands.Host, clock func() time.Time) *backlogCollector {
	return &backlogCollector{host: h, clock: clock,
		pending: prometheus.NewDesc("stepgate_tickets_pending", "Tickets waiting for an answer.", nil, nil),
		oldest: prometheus.NewDesc("stepgate_tickets_oldest_pending_age_seconds",
			"Age of the oldest ticket waiting for an answer (0 when none waits).", nil, nil),
		lag: prometheus.NewDesc("stepgate_projector_lag_sequences",
			"Stream sequences this host's projection trails the stream by (the stream's last sequence less the last applied).", nil, nil),
		applied: prometheus.NewDesc("stepgate_projector_applied_sequence", "The last stream sequence this host's projection applied.", nil, nil),
		quarants: prometheus.NewDesc("stepgate_quarantined_messages_total",
			"Messages of the log the folds skipped (undecodable, on a wrong subject, or not applicable); see engine quarantine.", nil, nil),
		leaseHeld: prometheus.NewDesc("stepgate_lease_held",
			"1 while this host holds its lease (renewed within its ttl less a margin, not taken over): only then does it start calls; 0 otherwise. Absent for a host without a lease (serve --lease 0).", nil, nil),
		takeovers: prometheus.NewDesc("stepgate_lease_takeovers_total",
			"Leases of other hosts this host took over (their renewals had stopped), settling what they left in doubt.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (b *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{b.pending, b.oldest, b.lag, b.applied, b.quarants, b.leaseHeld, b.takeovers} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. The lag asks the stream, for
// lagTimeout at most; when it cannot, the scrape says why and serves the
// rest.
func (b *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	bl := b.host.Backlog()
	age := 0.0
	if !bl.Oldest.IsZero() {
		age = max(0, b.clock().Sub(bl.Oldest).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(b.pending, prometheus.GaugeValue, float64(bl.Pending))
	ch <- prometheus.MustNewConstMetric(b.oldest, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(b.applied, prometheus.GaugeValue, float64(bl.Applied))
	ch <- prometheus.MustNewConstMetric(b.quarants, prometheus.CounterValue, float64(bl.Quarantined))
	if l := b.host.Lease(); l.On {
		held := 0.0
		if l.Held {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(b.leaseHeld, prometheus.GaugeValue, held)
		ch <- prometheus.MustNewConstMetric(b.takeovers, prometheus.CounterValue, float64(l.Takeovers))
	}
	ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
	defer cancel()
	lag, err := b.host.Lag(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(b.lag, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(b.lag, prometheus.GaugeValue, float64(lag))
}
