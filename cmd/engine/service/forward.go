package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// ForwardPrefix begins the subjects of hosts' own endpoints: a host answers
// requests other hosts forward to it (commands.Forwarder) on
// sgexec.<host token>.<operation> (see events.HostToken). Only the engine's NATS user may publish
// there (deploy/access): a forwarded request names the principal it is
// answered for, which the receiving host trusts.
const ForwardPrefix = "sgexec"

// PrincipalHeader carries, on a forwarded request, the principal it is
// answered for (trusted: only the engine's NATS user publishes on a host's
// own subject).
const PrincipalHeader = "Stepgate-Principal"

// forwardPatience bounds a forwarded request whose context has no deadline
// of its own: a call may run for long, a host that never answers may not
// hold the sender for ever.
const forwardPatience = 15 * time.Minute

// ForwardSubject is the subject of op on host's own endpoint.
func ForwardSubject(host, op string) string {
	return ForwardPrefix + "." + events.HostToken(host) + "." + op
}

// Forwarder forwards requests to other hosts over a NATS connection (see
// commands.Forwarder).
type Forwarder struct{ nc *nats.Conn }

// NewForwarder returns a Forwarder on nc.
func NewForwarder(nc *nats.Conn) *Forwarder { return &Forwarder{nc: nc} }

// Forward implements commands.Forwarder: the other host's service error
// comes back as a *commands.Error with its code; no answer (no such host
// subscribed, no answer in time) as an error that is not one.
func (f *Forwarder) Forward(ctx context.Context, host, op, principal string, body []byte) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, forwardPatience)
		defer cancel()
	}
	req := &nats.Msg{Subject: ForwardSubject(host, op), Data: body}
	if principal != "" {
		req.Header = nats.Header{PrincipalHeader: []string{principal}}
	}
	msg, err := f.nc.RequestMsgWithContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("forward %s to host %s: %w", op, host, err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return nil, &commands.Error{Code: code, Message: msg.Header.Get(micro.ErrorHeader)}
	}
	return msg.Data, nil
}

// serveForwarded answers, until ctx ends, the requests other hosts forward
// to this one; each is handled in its own goroutine, in one of sem's slots,
// tracked by live. It returns the subscription, for the caller to drain.
func serveForwarded(ctx context.Context, nc *nats.Conn, h *commands.Host, log *slog.Logger, sem chan struct{}, live *inflight) (*nats.Subscription, error) {
	prefix := ForwardSubject(h.HostName(), "")
	return nc.Subscribe(prefix+"*", func(m *nats.Msg) {
		op := strings.TrimPrefix(m.Subject, prefix)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			respond(nc, log, m, nil, errStopping)
			return
		}
		if !live.enter() {
			<-sem
			respond(nc, log, m, nil, errStopping)
			return
		}
		go func() {
			defer live.leave()
			defer func() { <-sem }()
			out, err := h.Forwarded(ctx, op, m.Header.Get(PrincipalHeader), m.Data)
			respond(nc, log, m, out, err)
		}()
	})
}

// respond answers a forwarded request: its data, or err as a service error
// with its stable code.
func respond(nc *nats.Conn, log *slog.Logger, m *nats.Msg, data []byte, err error) {
	if m.Reply == "" {
		return
	}
	msg := &nats.Msg{Subject: m.Reply, Data: data}
	if err != nil {
		code := commands.Code(err)
		if code == commands.CodeInternal && !errors.Is(err, context.Canceled) {
			log.Error("forwarded request failed", "subject", m.Subject, "err", err)
		}
		msg.Data = nil
		msg.Header = nats.Header{micro.ErrorHeader: []string{err.Error()}, micro.ErrorCodeHeader: []string{code}}
	}
	if perr := nc.PublishMsg(msg); perr != nil {
		log.Warn("could not answer a forwarded request", "subject", m.Subject, "err", perr)
	}
}
