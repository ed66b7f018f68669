package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
)

// connect serves a CONNECT: it checks the authority, dials the one
// upstream it names, answers 200 and pipes bytes both ways until both
// directions end. Whatever the client sends in the tunnel, a CONNECT
// included, goes to that upstream and to nothing else.
func (p *Proxy) connect(ctx context.Context, c net.Conn, br *bufio.Reader, req request) {
	rec := Conn{Form: FormConnect, Method: "CONNECT", Authority: req.RequestURI}
	t, err := parseAuthority(req.RequestURI, 0)
	if err != nil {
		p.refuse(c, &rec, badAuthority(err))
		return
	}
	rec.Authority = t.String()
	dec, ref := p.decide(ctx, t)
	if ref != nil {
		p.refuse(c, &rec, ref)
		return
	}
	rec.Verdict, rec.Rule = Allowed, dec.rule
	up, ip, err := p.dial(ctx, dec.addrs, t.port)
	if err != nil {
		p.refuse(c, &rec, &refusal{status: 502, code: CodeDialFailed, reason: fmt.Sprintf("cannot reach %s: %v", t, err)})
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	rec.IP, rec.Status = ip.String(), 200
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		rec.Error = err.Error()
		p.cfg.Record(rec)
		return
	}
	var upN, downN atomic.Int64
	group := &idleConns{conns: []net.Conn{c, up}, d: p.cfg.IdleTimeout}
	group.bump()
	toUp := countingConn{Conn: up, group: group, wrote: &upN}
	toClient := countingConn{Conn: c, group: group, wrote: &downN}
	errc := make(chan error, 1)
	go func() {
		_, err := io.Copy(toUp, br)
		closeWrite(up)
		errc <- err
	}()
	_, errDown := io.Copy(toClient, up)
	closeWrite(c)
	errUp := <-errc
	rec.BytesUp, rec.BytesDown = upN.Load(), downN.Load()
	if err := tunnelError(errUp, errDown); err != nil {
		rec.Error = err.Error()
	}
	p.cfg.Record(rec)
}

// dial connects to the first of addrs that accepts, all from the one
// resolution decide made: nothing here resolves a name again.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	defer cancel()
	var errs []error
	for _, a := range addrs {
		c, err := p.cfg.Dial(ctx, "tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(port))))
		if err == nil {
			return c, a, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, netip.Addr{}, errors.Join(errs...)
}

// badAuthority is the refusal for an authority that did not parse: an
// IP in a non-canonical form is an IP literal (403), anything else a bad
// request (400).
func badAuthority(err error) *refusal {
	if errors.Is(err, errNumericHost) {
		return &refusal{status: 403, code: CodeIPLiteral, reason: err.Error() + "; IP literals are refused"}
	}
	return &refusal{status: 400, code: CodeBadRequest, reason: err.Error()}
}

// tunnelError is what ended a tunnel abnormally: an idle timeout, or an
// error other than the ordinary ends of a connection.
func tunnelError(errs ...error) error {
	for _, err := range errs {
		switch {
		case err == nil, errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF),
			errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNRESET):
		case errors.Is(err, os.ErrDeadlineExceeded):
			return errors.New("idle timeout")
		default:
			return err
		}
	}
	return nil
}
