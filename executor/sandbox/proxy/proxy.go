// Package proxy is the host side of a sandbox's network: an HTTP proxy
// (CONNECT and absolute-form) that reaches only what its allow-list names.
// A sandboxed process has only loopback; the sandbox relays a port on its
// 127.0.0.1 to a unix socket on the host, which a Proxy serves. Names are
// resolved here, once, and the dial goes to the address resolved; IP
// literals and names resolving to non-public addresses are refused unless
// listed; a CONNECT tunnel reaches its one upstream only. Every attempt,
// allowed or refused, is given to Config.Record. It imports nothing of
// the module.
package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// Proxy serves the allow-list of one Config. It is safe for concurrent
// use; Serve may be called on several listeners.
type Proxy struct {
	cfg     Config
	allow   allowList
	special []special
	slots   chan struct{} // one per connection served
	spare   chan struct{} // one per connection being answered 503
}

// New checks cfg (see Config.Validate) and returns its proxy.
func New(cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	allow, _ := parseAllowList(cfg.Allow)
	return &Proxy{
		cfg:     cfg,
		allow:   allow,
		special: specialRanges(),
		slots:   make(chan struct{}, cfg.MaxConns),
		spare:   make(chan struct{}, 8),
	}, nil
}

// Serve accepts connections on ln until ctx is done, then closes ln and
// every connection it accepted, waits for their handlers and returns nil.
// It returns an accept error other than a transient one (too many open
// files, an aborted connection), after the same clean-up.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer func() {
		cancel() // closes ln and every connection, ending their handlers
		wg.Wait()
	}()
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if transient(err) {
				p.cfg.Logger.Warn("proxy: accept", "err", err, "retry_in", backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return nil
				}
				backoff = min(2*backoff, time.Second)
				continue
			}
			return fmt.Errorf("proxy: accept: %w", err)
		}
		backoff = 5 * time.Millisecond
		slot, ok := p.take()
		if !ok {
			c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slot }()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			defer c.Close()
			if slot == p.spare {
				p.overflow(c)
				return
			}
			p.serveConn(ctx, c)
		}()
	}
}

// take reserves a slot: one of MaxConns, or else one of the few spare
// slots in which an extra connection is answered 503; with none, false.
func (p *Proxy) take() (chan struct{}, bool) {
	select {
	case p.slots <- struct{}{}:
		return p.slots, true
	default:
	}
	select {
	case p.spare <- struct{}{}:
		return p.spare, true
	default:
		return nil, false
	}
}

// transient reports whether an accept error is worth a retry.
func transient(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ENOBUFS, syscall.ENOMEM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// serveConn serves one client connection: a CONNECT tunnel, or
// absolute-form requests, each checked, until one asks to close.
func (p *Proxy) serveConn(ctx context.Context, c net.Conn) {
	br := bufio.NewReaderSize(c, p.cfg.MaxHeaderBytes)
	for {
		c.SetDeadline(time.Now().Add(p.cfg.IdleTimeout))
		req, err := readRequest(br)
		if err != nil {
			p.refuseUnread(c, err)
			return
		}
		switch {
		case req.ProtoMajor != 1:
			rec := Conn{Form: formOf(req), Method: req.Method, Authority: req.Host}
			p.refuse(c, &rec, &refusal{status: 400, code: CodeBadRequest,
				reason: fmt.Sprintf("%s is not served: HTTP/1.x only", req.Proto)})
			return
		case req.Method == "CONNECT":
			p.connect(ctx, c, br, req)
			return
		case req.URL.IsAbs():
			if !p.forward(ctx, c, req) {
				return
			}
		default:
			rec := Conn{Form: FormOrigin, Method: req.Method, Authority: req.Host}
			p.refuse(c, &rec, &refusal{status: 400, code: CodeBadRequest,
				reason: fmt.Sprintf("%s %s is an origin-form request and this is a proxy: send absolute-form (GET http://host:port/path) or CONNECT host:port", req.Method, req.RequestURI)})
			return
		}
	}
}

// overflow answers a connection past MaxConns with 503, after reading
// its request briefly (so the client sees the answer, not a reset).
func (p *Proxy) overflow(c net.Conn) {
	c.SetDeadline(time.Now().Add(min(time.Second, p.cfg.IdleTimeout)))
	rec := Conn{Form: FormInvalid}
	if req, err := readRequest(bufio.NewReaderSize(c, p.cfg.MaxHeaderBytes)); err == nil {
		rec.Method, rec.Authority = req.Method, req.Host
		rec.Form = formOf(req)
	}
	p.refuse(c, &rec, &refusal{status: 503, code: CodeTooMany,
		reason: fmt.Sprintf("the proxy already serves %d connections; close one and retry", p.cfg.MaxConns)})
}

// refuseUnread answers a request that could not be read (a client that
// closed between requests is not an attempt and is not recorded).
func (p *Proxy) refuseUnread(c net.Conn, err error) {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.As(err, &ne) && ne.Timeout(), errors.Is(err, net.ErrClosed):
		return
	case errors.Is(err, errHeaderTooLarge):
		p.refuse(c, &Conn{Form: FormInvalid}, &refusal{status: 431, code: CodeHeaderTooLarge,
			reason: fmt.Sprintf("the request line and header exceed %d bytes", p.cfg.MaxHeaderBytes)})
	default:
		p.refuse(c, &Conn{Form: FormInvalid}, &refusal{status: 400, code: CodeBadRequest,
			reason: fmt.Sprintf("unreadable request: %v", err)})
	}
}

// formOf names the form of a request that was read.
func formOf(req request) string {
	switch {
	case req.Method == "CONNECT":
		return FormConnect
	case req.URL.IsAbs():
		return FormAbsolute
	default:
		return FormOrigin
	}
}
