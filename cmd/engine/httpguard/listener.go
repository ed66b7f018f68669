package httpguard

import (
	"log/slog"
	"net"
	"sync"
)

// Cap is ln accepting at most total connections open at once, and at most
// perAddr from one client address (the remote IP, port aside). A
// connection beyond either is closed as soon as it is accepted, so it
// holds no descriptor, and the listener goes on accepting: a client that
// hoards connections from one address leaves room for the others.
func Cap(ln net.Listener, total, perAddr int, log *slog.Logger) net.Listener {
	return &capListener{Listener: ln, total: total, perAddr: perAddr, log: log, byAddr: map[string]int{}}
}

type capListener struct {
	net.Listener
	total, perAddr int
	log            *slog.Logger

	mu      sync.Mutex
	open    int
	byAddr  map[string]int
	refused uint64
}

// Accept returns the next connection within the caps.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr())
		if n, ok := l.admit(addr); !ok {
			_ = c.Close()
			if n&(n-1) == 0 { // the 1st, 2nd, 4th… refusal: a flood is logged, not echoed
				l.log.Warn("http: connection refused: too many open", "remote", addr, "max", l.total, "max_per_address", l.perAddr, "refused", n)
			}
			continue
		}
		return &capConn{Conn: c, release: func() { l.release(addr) }}, nil
	}
}

// admit counts a connection from addr in, unless it would pass a cap; n
// is then how many have been refused.
func (l *capListener) admit(addr string) (refused uint64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.total || l.byAddr[addr] >= l.perAddr {
		l.refused++
		return l.refused, false
	}
	l.open++
	l.byAddr[addr]++
	return 0, true
}

func (l *capListener) release(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// hostOf is a remote address's IP (its string when it has no port).
func hostOf(a net.Addr) string {
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// capConn is an admitted connection: closing it frees its place.
type capConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close frees the place first, so a client that sees the close can
// connect again at once.
func (c *capConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
