// Package notify delivers a fleet's lifecycle events — a ticket issued, a
// ticket resolved, a run ended — to the webhooks of the user's file: a POST
// of a JSON [Payload], signed with HMAC-SHA256 ([Sign], [Verify]), retried
// with jittered backoff, once per event per fleet.
//
// Events are read from the log, never from a host's memory: every host
// with webhooks pulls from one durable JetStream consumer on the stream's
// run subjects, so each commit goes to one host, which acknowledges it once
// every webhook answered it 2xx or was given up on. A host that stops
// before that leaves the commit to another (at once on a clean stop, after
// the consumer's AckWait when it dies): delivery is at least once, and a
// receiver de-duplicates on the Stepgate-Delivery header. Delivery runs
// beside the host's commands, never on a step's path.
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/config"
)

// Defaults of [Config].
const (
	DefaultConsumer       = "stepgate-notify"
	DefaultWorkers        = 4
	DefaultAttempts       = 5
	DefaultBackoff        = time.Second
	DefaultMaxBackoff     = 30 * time.Second
	DefaultAttemptTimeout = 10 * time.Second
	DefaultAckWait        = 30 * time.Second
	DefaultFactsWait      = 5 * time.Second
	// maxDeliver bounds how often the log hands one commit out (hosts that
	// stopped while delivering it): a commit that stops every host is not
	// handed out for ever.
	maxDeliver = 10
)

// Hook is a webhook ready to deliver to: its secret resolved.
type Hook struct {
	URL         string
	Secret      []byte
	Events      []string
	IncludeArgs bool
}

// Where is the hook's URL as logs and errors name it: scheme and host
// only, since a receiver's path or query may itself be a capability (a
// chat service's incoming-webhook URL).
func (h Hook) Where() string {
	u, err := neturl.Parse(h.URL)
	if err != nil || u.Host == "" {
		return "(webhook)"
	}
	if u.Path == "" && u.RawQuery == "" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// Hooks resolves the secrets of the user's webhooks. The error names the
// webhook (file and line) and the reference, never a secret.
func Hooks(ctx context.Context, ws []config.Webhook, secrets *config.Secrets) ([]Hook, error) {
	out := make([]Hook, 0, len(ws))
	for _, w := range ws {
		s, err := secrets.Resolve(ctx, w.Secret)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: notify: secret: %w", w.File, w.Line, err)
		}
		if s == "" {
			return nil, fmt.Errorf("%s:%d: notify: secret: resolved to an empty value: %w", w.File, w.Line, config.ErrSecret)
		}
		out = append(out, Hook{URL: w.URL, Secret: []byte(s), Events: slices.Clone(w.Events), IncludeArgs: w.IncludeArgs})
	}
	return out, nil
}

// Metrics counts deliveries, for monitoring (cmd/engine implements it with
// Prometheus counters). Safe for concurrent use; must not block.
type Metrics interface {
	// Delivered is called once per event a webhook answered 2xx.
	Delivered(event string)
	// Retried is called once per attempt that failed and is tried again.
	Retried(event string)
	// Failed is called once per event a webhook was given up on.
	Failed(event string)
}

// noMetrics counts nothing.
type noMetrics struct{}

func (noMetrics) Delivered(string) {}
func (noMetrics) Retried(string)   {}
func (noMetrics) Failed(string)    {}

// Config configures a [Deliverer]. JS, Stream, Hooks and Facts are
// required; zero values elsewhere take the defaults.
type Config struct {
	// JS and Stream are the log's JetStream and stream name.
	JS     jetstream.JetStream
	Stream string
	// Hooks are where to deliver.
	Hooks []Hook
	// Facts is the host's projection: a run's project and agent, a
	// resolved ticket's tool.
	Facts Facts
	// PublicURL is the inbox's external base URL (serve --public-url):
	// ticket_issued links to PublicURL/tickets/ID; "" for no link.
	PublicURL string
	// Version is the engine's, in the User-Agent.
	Version string
	Logger  *slog.Logger
	Metrics Metrics
	// Clock signs each attempt; nil for time.Now.
	Clock func() time.Time
	// Client sends the POSTs; nil for one that follows no redirect. A
	// client given here should not follow redirects either.
	Client *http.Client
	// Consumer is the durable consumer's name, shared by the fleet.
	Consumer string
	// Workers is how many commits this host delivers at once.
	Workers int
	// Attempts bounds the POSTs of one event to one webhook.
	Attempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each further one up to MaxBackoff, jittered.
	Backoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one POST, its answer included.
	AttemptTimeout time.Duration
	// AckWait is how long the log waits for a host that stopped answering
	// before it hands the commit to another.
	AckWait time.Duration
	// FactsWait bounds the wait for the projection to apply a commit.
	FactsWait time.Duration
}

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Backoff, DefaultBackoff)
	def(&c.MaxBackoff, DefaultMaxBackoff)
	def(&c.AttemptTimeout, DefaultAttemptTimeout)
	def(&c.AckWait, DefaultAckWait)
	def(&c.FactsWait, DefaultFactsWait)
	c.MaxBackoff = max(c.MaxBackoff, c.Backoff)
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers
	}
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c
}

// ErrConfig is a Config without what a deliverer needs.
var ErrConfig = errors.New("webhook deliverer: incomplete configuration")

// Deliverer delivers the fleet's lifecycle events to this host's webhooks.
// Every host of a fleet should declare the same webhooks: each event goes
// to one host, which delivers it to the webhooks its own file declares.
type Deliverer struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
}

// New checks cfg and returns a deliverer; nothing runs until [Deliverer.Run].
func New(cfg Config) (*Deliverer, error) {
	if cfg.JS == nil || cfg.Stream == "" || cfg.Facts == nil || len(cfg.Hooks) == 0 {
		return nil, ErrConfig
	}
	cfg = cfg.withDefaults()
	d := &Deliverer{cfg: cfg, log: cfg.Logger, client: cfg.Client}
	if d.client == nil {
		d.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return d, nil
}
