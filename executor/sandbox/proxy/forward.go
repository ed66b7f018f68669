package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
)

// forward serves one absolute-form request: it checks the URI's host
// (and that a Host header agrees with it), dials that host on a fresh
// connection, sends the request in origin-form without hop-by-hop
// headers, and copies the response back. It reports whether the client
// connection may carry another request: keep-alive is kept, and each
// request on it is checked again, on its own upstream connection.
func (p *Proxy) forward(ctx context.Context, c net.Conn, req request) bool {
	rec := Conn{Form: FormAbsolute, Method: req.Method, Authority: req.URL.Host}
	if req.URL.Scheme != "http" {
		p.refuse(c, &rec, &refusal{status: 400, code: CodeBadRequest,
			reason: fmt.Sprintf("absolute-form is for http:// only, not %s://; use CONNECT host:port for TLS", req.URL.Scheme)})
		return false
	}
	t, err := parseAuthority(req.URL.Host, 80)
	if err != nil {
		p.refuse(c, &rec, badAuthority(err))
		return false
	}
	rec.Authority = t.String()
	for _, h := range req.hosts {
		if ht, err := parseAuthority(h, 80); err != nil || ht != t {
			p.refuse(c, &rec, &refusal{status: 403, code: CodeHostMismatch,
				reason: fmt.Sprintf("the Host header %q disagrees with the request's host %s", h, t)})
			return false
		}
	}
	dec, ref := p.decide(ctx, t)
	if ref != nil {
		p.refuse(c, &rec, ref)
		return false
	}
	rec.Verdict, rec.Rule = Allowed, dec.rule
	up, ip, err := p.dial(ctx, dec.addrs, t.port)
	if err != nil {
		p.refuse(c, &rec, &refusal{status: 502, code: CodeDialFailed, reason: fmt.Sprintf("cannot reach %s: %v", t, err)})
		return false
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	rec.IP = ip.String()

	var upN, downN atomic.Int64
	group := &idleConns{conns: []net.Conn{c, up}, d: p.cfg.IdleTimeout}
	group.bump()
	toUp := countingConn{Conn: up, group: group, wrote: &upN}
	toClient := countingConn{Conn: c, group: group, wrote: &downN}
	keep := !req.Close
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// The check passed: let the client send its body now, and do not
		// ask the upstream (whose interim answers are not forwarded).
		req.Header.Del("Expect")
		if _, err := io.WriteString(toClient, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return p.failed(&rec, &upN, &downN, err)
		}
	}
	removeHopByHop(req.Header)
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // Write would add Go's own
	}
	req.Close = true // one request per upstream connection
	if err := req.Write(toUp); err != nil {
		return p.failed(&rec, &upN, &downN, fmt.Errorf("send request: %w", err))
	}
	resp, err := readFinalResponse(bufio.NewReader(countingConn{Conn: up, group: group}), req.Request)
	if err != nil {
		if downN.Load() == 0 {
			p.refuse(c, &rec, &refusal{status: 502, code: CodeUpstreamFailed, reason: fmt.Sprintf("%s: %v", t, err)})
			return false
		}
		return p.failed(&rec, &upN, &downN, err)
	}
	defer resp.Body.Close()
	removeHopByHop(resp.Header)
	// The upstream was asked to close; whether the client connection
	// stays open depends on the client, and on a body delimited by EOF.
	resp.Close = !keep || resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 && req.Method != "HEAD"
	rec.Status = resp.StatusCode
	if err := resp.Write(toClient); err != nil {
		return p.failed(&rec, &upN, &downN, fmt.Errorf("send response: %w", err))
	}
	rec.BytesUp, rec.BytesDown = upN.Load(), downN.Load()
	p.cfg.Record(rec)
	return !resp.Close
}

// failed records an allowed exchange that broke after bytes flowed; the
// client connection is then closed.
func (p *Proxy) failed(rec *Conn, up, down *atomic.Int64, err error) bool {
	rec.BytesUp, rec.BytesDown = up.Load(), down.Load()
	rec.Code = CodeUpstreamFailed
	if e := tunnelError(err); e != nil {
		rec.Error = e.Error()
	} else {
		rec.Error = err.Error()
	}
	p.cfg.Record(*rec)
	return false
}

// readFinalResponse reads the upstream's response, skipping interim 1xx
// answers; a 101 (an upgrade, never asked for) is an error.
func readFinalResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for range 8 {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, fmt.Errorf("read response: %w", err)
		}
		if resp.StatusCode >= 200 {
			return resp, nil
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("read response: unexpected 101 Switching Protocols")
		}
	}
	return nil, fmt.Errorf("read response: too many interim responses")
}

// removeHopByHop deletes the headers meant for one hop only: those the
// Connection header names and the standard ones, Upgrade included (a
// forwarded request is never upgraded).
func removeHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"} {
		h.Del(name)
	}
}
