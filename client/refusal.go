package client

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
)

// A request the NATS server refuses for the connection's permissions gets
// no answer, ever: the server drops it and tells the client only through
// the connection's asynchronous error handler (nats.ErrPermissionViolation,
// "Permissions Violation for Publish to "stepgate.tickets""). Without this
// file such a request waited for its whole timeout. With it, the handler
// [Dial] installs fails every request in flight that the refusal names at
// once, with ErrPermissionDenied: a request published to the refused
// subject, or a request whose answer inbox the server refused to let the
// client subscribe to (the role's inbox prefix was not given). This is the
// one place that reads the server's refusals.

// violation is what the server refused, parsed from its protocol message.
type violation struct {
	// subject is the refused subject: a request's subject (publish) or a
	// reply inbox (subscription, or a publish's reply subject).
	subject string
	// inbox: the refused subject is where answers come back (a subscription,
	// or the reply subject of a publish), not the request's subject.
	inbox bool
}

// The server's protocol messages (nats-server's client.go), after
// nats.go's "nats: permissions violation: " and with the subject quoted as
// Go quotes it (%q). A subscription's may go on (` using queue "q"`,
// ` (sid "1")`, `, too many tokens`).
const (
	violationPrefix    = "Permissions Violation for "
	violationPublish   = "Publish to "
	violationReply     = "Publish with Reply of "
	violationSubscribe = "Subscription to "
)

// parseViolation reads the refused subject out of an error the connection's
// error handler got; ok is false for any other error. It matches only the
// server's own message, never free text.
func parseViolation(err error) (v violation, ok bool) {
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return violation{}, false
	}
	_, text, found := strings.Cut(err.Error(), violationPrefix)
	if !found {
		return violation{}, false
	}
	switch {
	case strings.HasPrefix(text, violationPublish):
		text = strings.TrimPrefix(text, violationPublish)
	case strings.HasPrefix(text, violationReply):
		text, v.inbox = strings.TrimPrefix(text, violationReply), true
	case strings.HasPrefix(text, violationSubscribe):
		text, v.inbox = strings.TrimPrefix(text, violationSubscribe), true
	default:
		return violation{}, false
	}
	quoted, qerr := strconv.QuotedPrefix(text)
	if qerr != nil || !utf8.ValidString(quoted) { // %q writes valid UTF-8 only
		return violation{}, false
	}
	subject, qerr := strconv.Unquote(quoted)
	if qerr != nil || subject == "" || strings.ContainsAny(subject, " \t\r\n") {
		return violation{}, false
	}
	v.subject = subject
	return v, true
}

// refusals are the requests in flight of one connection, by the subjects a
// refusal may name. Safe for concurrent use.
type refusals struct {
	mu      sync.Mutex
	watches map[*refusalWatch]struct{}
}

// refusalWatch is one request in flight: its subject, its answer inbox, and
// where the refusal that names either goes (buffered: the first one wins).
type refusalWatch struct {
	subject, inbox string
	ch             chan violation
}

func newRefusals() *refusals { return &refusals{watches: map[*refusalWatch]struct{}{}} }

// watch registers a request to subject answered on inbox, before it is
// sent; stop unregisters it.
func (r *refusals) watch(subject, inbox string) (refused <-chan violation, stop func()) {
	w := &refusalWatch{subject: subject, inbox: inbox, ch: make(chan violation, 1)}
	r.mu.Lock()
	r.watches[w] = struct{}{}
	r.mu.Unlock()
	return w.ch, func() {
		r.mu.Lock()
		delete(r.watches, w)
		r.mu.Unlock()
	}
}

// handle is given every error of the connection's error handler: a
// permission violation fails each request in flight it names (a refused
// publish every request to that subject, a refused inbox the one request
// answered there). Any other error is left alone.
func (r *refusals) handle(err error) {
	v, ok := parseViolation(err)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.watches {
		if (v.inbox && w.inbox == v.subject) || (!v.inbox && w.subject == v.subject) {
			select {
			case w.ch <- v:
			default:
			}
		}
	}
}

// errorHandler is a nats.Option that has refusals see the connection's
// asynchronous errors first, then passes them on to the handler the
// options given before it set (if any).
func (r *refusals) errorHandler() nats.Option {
	return func(o *nats.Options) error {
		next := o.AsyncErrorCB
		o.AsyncErrorCB = func(nc *nats.Conn, sub *nats.Subscription, err error) {
			r.handle(err)
			if next != nil {
				next(nc, sub, err)
			}
		}
		return nil
	}
}

// refused is the error of a request to endpoint the server refused.
func refused(nc *nats.Conn, endpoint string, v violation) error {
	who := "this connection's NATS user"
	if u := natsUser(nc); u != "" {
		who = fmt.Sprintf("user %q", u)
	}
	if v.inbox {
		return fmt.Errorf("%s: %s: answers come back on %s, which %s may not subscribe to: give --inbox-prefix _INBOX.<role> "+
			"(the prefix the user's role may subscribe to, such as _INBOX.agent): %w", endpoint, CodePermissionDenied, v.subject, who, ErrPermissionDenied)
	}
	return fmt.Errorf("%s: %s: the NATS server refused it: %s may not publish to %s (its role may not ask %s): %w",
		endpoint, CodePermissionDenied, who, v.subject, endpoint, ErrPermissionDenied)
}

// natsUser is the user name nc connected with, "" if it gave none (or a
// credentials file, whose user the client cannot name).
func natsUser(nc *nats.Conn) string {
	if nc.Opts.User != "" {
		return nc.Opts.User
	}
	for _, s := range append([]string{nc.Opts.Url}, nc.Opts.Servers...) {
		for _, one := range strings.Split(s, ",") {
			if u, err := url.Parse(strings.TrimSpace(one)); err == nil && u.User != nil && u.User.Username() != "" {
				return u.User.Username()
			}
		}
	}
	return ""
}
