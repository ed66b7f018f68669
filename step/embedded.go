package step

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Sync modes of the server's file storage.
const (
	// SyncInterval flushes on the server's interval: fast, and survives a
	// process crash.
	SyncInterval = "interval"
	// SyncAlways fsyncs every write: survives power loss.
	SyncAlways = "always"
)

// EmbeddedConfig configures an in-process NATS server with JetStream.
type EmbeddedConfig struct {
	// Dir holds JetStream's storage. Required.
	Dir string `json:"dir" yaml:"dir"`
	// Listen is host:port for other processes to connect to; empty means no
	// network listener (in-process connections only). Port 0 picks a free one.
	Listen string `json:"listen" yaml:"listen"`
	// Sync is SyncInterval (default) or SyncAlways.
	Sync string `json:"sync" yaml:"sync"`
	// AuthFile is a nats-server configuration file whose authorization
	// block (users, permissions) and accounts the server enforces; empty
	// means no authentication. See deploy/access/accounts.conf.
	AuthFile string `json:"auth_file" yaml:"auth_file"`
}

// Validate reports a configuration that cannot work.
func (c EmbeddedConfig) Validate() error {
	if c.Dir == "" {
		return fmt.Errorf("embedded server: a data directory is required")
	}
	switch c.Sync {
	case "", SyncInterval, SyncAlways:
	default:
		return fmt.Errorf("embedded server: sync %q: want %q or %q", c.Sync, SyncInterval, SyncAlways)
	}
	if c.Listen != "" {
		if _, port, err := net.SplitHostPort(c.Listen); err != nil {
			return fmt.Errorf("embedded server: listen %q: %w", c.Listen, err)
		} else if _, err := strconv.Atoi(port); err != nil {
			return fmt.Errorf("embedded server: listen %q: bad port", c.Listen)
		}
	}
	return nil
}

// Embedded is a running in-process NATS server with JetStream.
type Embedded struct {
	srv *server.Server
}

// StartEmbedded starts a server and waits until it accepts connections or
// ctx ends.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*Embedded, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName:         "stepgate-embedded",
		JetStream:          true,
		StoreDir:           cfg.Dir,
		MaxPayload:         DefaultMaxMsgSize,
		NoSigs:             true,
		NoLog:              true,
		DontListen:         cfg.Listen == "",
		JetStreamMaxMemory: 64 << 20,
	}
	if cfg.Listen != "" {
		host, port, _ := net.SplitHostPort(cfg.Listen)
		opts.Host = host
		opts.Port, _ = strconv.Atoi(port)
		if opts.Port == 0 {
			opts.Port = server.RANDOM_PORT
		}
	}
	if cfg.Sync == SyncAlways {
		opts.SyncAlways = true
	}
	if cfg.AuthFile != "" {
		if err := loadAuth(opts, cfg.AuthFile); err != nil {
			return nil, err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded server: %w", err)
	}
	go srv.Start()
	deadline := 30 * time.Second
	if d, ok := ctx.Deadline(); ok {
		deadline = time.Until(d)
	}
	if !srv.ReadyForConnections(deadline) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded server on %s: not ready after %s", cfg.Dir, deadline)
	}
	return &Embedded{srv: srv}, nil
}

// Connect opens an in-process client connection to the server.
func (e *Embedded) Connect(opts ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect("", append([]nats.Option{nats.InProcessServer(e.srv), nats.Name("stepgate")}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to embedded server: %w", err)
	}
	return nc, nil
}

// ClientURL returns the URL other processes use, or "" without a listener.
func (e *Embedded) ClientURL() string {
	if e.srv.Addr() == nil {
		return ""
	}
	return e.srv.ClientURL()
}

// Shutdown stops the server and waits until it has stopped.
func (e *Embedded) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
