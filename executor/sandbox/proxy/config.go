package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"
)

// Resolver resolves a name on the host. *net.Resolver satisfies it. It
// must be safe for concurrent use; network is "ip".
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is a proxy's allow-list and bounds. The zero value refuses
// everything with the default bounds.
type Config struct {
	// Allow lists what may be reached: "host:port", "*.example.com:443"
	// (names strictly below example.com), "IP:port" or "[v6]:port".
	// Ports are exact. A name listed exactly may resolve to a private
	// address; one admitted by a wildcard may not.
	Allow []string `json:"allow,omitempty"`
	// Resolver resolves names, once per attempt; net's by default.
	Resolver Resolver `json:"-"`
	// Dial opens the upstream connection to a resolved "ip:port"; a
	// net.Dialer's by default. It is never given a name.
	Dial func(ctx context.Context, network, address string) (net.Conn, error) `json:"-"`
	// Record receives every connection attempt when it ends, allowed or
	// refused. It is called from the connection's goroutine, so
	// concurrently with other calls, and must not block for long.
	Record func(Conn) `json:"-"`
	// Logger logs what cannot be returned (accept retries); discarded by
	// default.
	Logger *slog.Logger `json:"-"`
	// MaxHeaderBytes bounds a request's line and header (default 16 KiB).
	MaxHeaderBytes int `json:"max_header_bytes,omitempty"`
	// IdleTimeout closes a connection with no byte in either direction
	// for this long, and bounds the wait for a request (default 2 min).
	IdleTimeout time.Duration `json:"idle_timeout,omitempty"`
	// DialTimeout bounds resolving and dialling (default 10 s).
	DialTimeout time.Duration `json:"dial_timeout,omitempty"`
	// MaxConns bounds the connections served at once (default 64); more
	// are answered 503.
	MaxConns int `json:"max_conns,omitempty"`
}

// ErrConfig is wrapped by New's errors for a bad configuration.
var ErrConfig = errors.New("proxy: bad configuration")

// Validate reports the first bad allow-list entry or negative bound.
func (c Config) Validate() error {
	if _, err := parseAllowList(c.Allow); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.MaxHeaderBytes < 0 || c.IdleTimeout < 0 || c.DialTimeout < 0 || c.MaxConns < 0 {
		return fmt.Errorf("%w: negative bound", ErrConfig)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Resolver == nil {
		c.Resolver = &net.Resolver{}
	}
	if c.Dial == nil {
		c.Dial = (&net.Dialer{}).DialContext
	}
	if c.Record == nil {
		c.Record = func(Conn) {}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = 16 << 10
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 2 * time.Minute
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.MaxConns == 0 {
		c.MaxConns = 64
	}
	return c
}
