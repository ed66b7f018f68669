package hosting

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stepgate/stepgate/config"
)

// notifyMetrics counts webhook deliveries on a host's registry.
type notifyMetrics struct {
	delivered, failed, retried map[string]prometheus.Counter // read-only after newNotifyMetrics
}

// newNotifyMetrics registers the webhook counters on reg, every event's
// at 0.
func newNotifyMetrics(reg prometheus.Registerer) (*notifyMetrics, error) {
	deliveries := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_webhook_deliveries_total",
		Help: "Events this host delivered to a webhook (outcome delivered: answered 2xx) or gave up on (outcome failed: every attempt failed, or the receiver refused it), by event."},
		[]string{"event", "outcome"})
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "stepgate_webhook_retries_total",
		Help: "Webhook attempts of this host that failed and were tried again, by event."}, []string{"event"})
	for _, c := range []prometheus.Collector{deliveries, retries} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	m := &notifyMetrics{delivered: map[string]prometheus.Counter{}, failed: map[string]prometheus.Counter{}, retried: map[string]prometheus.Counter{}}
	for _, e := range []string{config.EventTicketIssued, config.EventTicketResolved, config.EventRunEnded} {
		m.delivered[e] = deliveries.WithLabelValues(e, "delivered")
		m.failed[e] = deliveries.WithLabelValues(e, "failed")
		m.retried[e] = retries.WithLabelValues(e)
	}
	return m, nil
}

// inc adds one to event's counter of m, if it has one.
func inc(m map[string]prometheus.Counter, event string) {
	if c, ok := m[event]; ok {
		c.Inc()
	}
}

// Delivered implements notify.Metrics.
func (m *notifyMetrics) Delivered(event string) { inc(m.delivered, event) }

// Failed implements notify.Metrics.
func (m *notifyMetrics) Failed(event string) { inc(m.failed, event) }

// Retried implements notify.Metrics.
func (m *notifyMetrics) Retried(event string) { inc(m.retried, event) }
