package proxy

import (
	"net"
	"sync/atomic"
	"time"
)

// idleConns bounds the silence of a group of connections: every byte
// read or written on one of them pushes the deadline of all of them
// IdleTimeout further, so one direction of a tunnel may be quiet while
// the other is busy, and nothing waits forever on a silent peer.
type idleConns struct {
	conns []net.Conn
	d     time.Duration
}

// bump pushes every connection's deadline d further.
func (g *idleConns) bump() {
	t := time.Now().Add(g.d)
	for _, c := range g.conns {
		c.SetDeadline(t)
	}
}

// countingConn counts the bytes through c and bumps its group on each.
type countingConn struct {
	net.Conn
	group       *idleConns
	read, wrote *atomic.Int64
}

// Read reads from the connection, counting and bumping.
func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		if c.read != nil {
			c.read.Add(int64(n))
		}
		c.group.bump()
	}
	return n, err
}

// Write writes to the connection, counting and bumping.
func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		if c.wrote != nil {
			c.wrote.Add(int64(n))
		}
		c.group.bump()
	}
	return n, err
}

// closeWrite half-closes c if it can (TCP and unix connections can), so
// the peer sees the end of one direction while the other still flows.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
