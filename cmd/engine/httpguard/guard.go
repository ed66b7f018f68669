// Package httpguard bounds what a slow or hostile client can hold of the
// engine's HTTP servers (the operators' web app of `engine serve --http`
// and `engine mcp serve --listen`): the time to send a request's headers
// and its body, the idle time of a kept-alive connection, and the number
// of connections open at once, in all and from one client address. The
// process shares its file descriptors with NATS and bbolt, so a client
// that trickles bytes must not keep one for long, nor many at once.
//
// Responses are not bounded in time: the web app's live stream and MCP's
// streams stay open as long as their clients read them.
package httpguard

import (
	"log/slog"
	"net"
	"net/http"
	"time"
)

// The limits of every HTTP server of the engine.
const (
	// HeaderTimeout is how long a client has to send a request's headers.
	HeaderTimeout = 10 * time.Second
	// RequestTimeout is how long a client has to send a whole request,
	// headers and body. Once the body has been read the deadline is lifted
	// (net/http clears it when the body ends): the answer may stream for
	// as long as the client reads it.
	RequestTimeout = 30 * time.Second
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request.
	IdleTimeout = 2 * time.Minute
	// MaxConns is how many connections may be open at once; one more is
	// closed as soon as it is accepted.
	MaxConns = 256
	// MaxConnsPerAddr is how many of them may come from one client
	// address (behind a proxy, every connection is the proxy's).
	MaxConnsPerAddr = 32
)

// Limits are a server's bounds; [Default] is the engine's.
type Limits struct {
	HeaderTimeout, RequestTimeout, IdleTimeout time.Duration
	MaxConns, MaxConnsPerAddr                  int
}

// Default is the engine's limits: the constants above.
func Default() Limits {
	return Limits{HeaderTimeout: HeaderTimeout, RequestTimeout: RequestTimeout, IdleTimeout: IdleTimeout,
		MaxConns: MaxConns, MaxConnsPerAddr: MaxConnsPerAddr}
}

// Server is an http.Server for h with l's timeouts: a request's headers,
// the whole request, and idle connections. No timeout covers an answer,
// so streams are not cut. Serve it on [Listen]'s listener.
func Server(h http.Handler, l Limits, log *slog.Logger) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.HeaderTimeout, ReadTimeout: l.RequestTimeout, IdleTimeout: l.IdleTimeout,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}

// Listen is ln with l's connection caps (see [Cap]).
func Listen(ln net.Listener, l Limits, log *slog.Logger) net.Listener {
	return Cap(ln, l.MaxConns, l.MaxConnsPerAddr, log)
}
