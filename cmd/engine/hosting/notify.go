package hosting

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/config"
)

// newNotifier is the webhook deliverer of the user's file (notify:), for
// host on nc; nil when the file declares no webhook. Secrets are resolved
// here: a reference that does not resolve stops serve with its name.
func newNotifier(ctx context.Context, nc *nats.Conn, host *commands.Host, l config.Loader, publicURL, version string, reg prometheus.Registerer, log *slog.Logger) (*notify.Deliverer, error) {
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
		Version: version, Logger: log}
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
