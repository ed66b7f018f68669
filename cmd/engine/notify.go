package main

import (
	"context"
	"fmt"
	"log/slog"
	neturl "net/url"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/config"
)

// checkPublicURL checks serve --public-url: an absolute http or https URL
// with a host ("" for none).
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := neturl.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--public-url %q: want the inbox's external base URL, http:// or https:// with a host (no credentials, query or fragment)", s)
	}
	return nil
}

// newNotifier is the webhook deliverer of the user's file (notify:), for
// host on nc; nil when the file declares no webhook. Secrets are resolved
// here: a reference that does not resolve stops serve with its name.
func newNotifier(ctx context.Context, nc *nats.Conn, host *commands.Host, l config.Loader, publicURL string, reg prometheus.Registerer, log *slog.Logger) (*notify.Deliverer, error) {
	ws, err := l.Webhooks()
	if err != nil || len(ws) == 0 {
		return nil, err
	}
	secrets, err := l.Secrets()
	if err != nil {
		return nil, err
	}
	hooks, err := notify.Hooks(ctx, ws, secrets)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	cfg := notify.Config{JS: js, Stream: host.Log.Name(), Hooks: hooks, Facts: host.Proj, PublicURL: publicURL,
		Version: version(), Logger: log}
	if reg != nil {
		if cfg.Metrics, err = newNotifyMetrics(reg); err != nil {
			return nil, err
		}
	}
	for i, h := range hooks {
		log.Info("webhook", "url", h.Where(), "events", h.Events, "include_args", h.IncludeArgs, "declared", fmt.Sprintf("%s:%d", ws[i].File, ws[i].Line))
	}
	return notify.New(cfg)
}

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
