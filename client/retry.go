package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// How the client sends a request again. A request is sent again only when
// sending it twice does what sending it once does (see idempotent): after
// the connection to NATS came back (the answer of a request in flight is
// lost with the connection), when no answer came within the attempt's wait
// (a host that died while the NATS server it used lives on), and shortly
// after "no responders" (no host serves yet: it is restarting). Every copy
// is answered to one inbox and the first answer wins, so a copy sent while
// a long tool call runs never cuts that call: the host that runs it answers
// the first copy when it is done, and a copy that reached it meanwhile waits
// on the run's lock and answers with the recorded outcome.
const (
	noRespondersFirst = 100 * time.Millisecond // the first wait after "no responders", doubling
	noRespondersLimit = 2 * time.Second
	statusHeader      = "Status" // nats.go's no-responders status
	statusNoResponse  = "503"
)

// errNotResent is a request in flight whose answer was lost and that is not
// sent again, because a second copy could apply it twice.
var errNotResent = errors.New("not sent again: it may or may not have been applied")

// idempotent reports whether a request to endpoint may be sent again:
// every endpoint but those whose second copy would act again or answer
// differently for no reason the client can check.
func idempotent(endpoint string) bool {
	switch endpoint {
	case EndpointRevoke, EndpointRegister, EndpointCloseScope:
		return false
	}
	return true
}

// attemptWait is how long the client waits for an answer to the n-th copy
// of a request before it sends another (doubling, up to a limit): short for
// queries, longer where a host's answer waits for tool calls or a human.
func attemptWait(endpoint string, n int) time.Duration {
	first, limit := 2*time.Second, 15*time.Second
	switch endpoint {
	case EndpointSubmitStep, EndpointReply, EndpointStartRun, EndpointEndRun, EndpointMaterialize, EndpointRecover, EndpointMCPServers, EndpointRecordTurn:
		first, limit = 5*time.Second, time.Minute
	case EndpointAwait:
		first, limit = time.Minute, 5*time.Minute
	}
	d := first << min(n-1, 10)
	return min(d, limit)
}

// defaultTimeout is how long one request may take, its copies included,
// when neither WithTimeout (the CLI's --timeout) nor the caller's context
// says.
func defaultTimeout(endpoint string) time.Duration {
	switch endpoint {
	case EndpointAwait:
		return 24 * time.Hour // a human may take a while
	case EndpointSubmitStep, EndpointReply, EndpointStartRun, EndpointEndRun, EndpointMaterialize, EndpointRecover:
		return 15 * time.Minute // long enough for the longest tool call
	}
	return time.Minute
}

// echoFunc looks at an error answer to a request that was sent more than
// once: it may be the echo of an earlier copy that did the work (a second
// submit of a step being executed is a conflict, a second reply finds the
// ticket resolved). It returns done with the outcome (nil: resp is filled),
// or not done: the earlier copy is still at work, keep waiting.
type echoFunc func(ctx context.Context, answer *Error) (done bool, err error)

// connWatch tells a waiting request that the connection to NATS is back.
// Safe for concurrent use.
type connWatch struct {
	mu sync.Mutex
	ch chan struct{}
	// connectedAtDial: the connection was up when Dial returned, so the
	// first-connect callback (delivered later, on the connection's own
	// goroutine) cut no request and must not be taken for a reconnect.
	connectedAtDial bool
}

func newConnWatch() *connWatch { return &connWatch{ch: make(chan struct{})} }

// next returns a channel that is closed at the next (re)connect.
func (w *connWatch) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

// firstConnect is the handler of the connection's first connect: a
// reconnect unless the connection was up before any request was sent.
func (w *connWatch) firstConnect(nc *nats.Conn) {
	w.mu.Lock()
	skip := w.connectedAtDial
	w.mu.Unlock()
	if !skip {
		w.connected(nc)
	}
}

// upAtDial records that the connection was up when Dial returned.
func (w *connWatch) upAtDial() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.connectedAtDial = true
}

// connected is the (re)connect handler.
func (w *connWatch) connected(*nats.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.ch)
	w.ch = make(chan struct{})
}

// call sends req to endpoint and decodes the answer into resp, sending the
// request again as the constants above say, until the first answer, ctx's
// end, or the request's deadline (c.timeout, else defaultTimeout).
func (c *Client) call(ctx context.Context, endpoint string, req, resp any, echo echoFunc) error {
	return c.callAt(ctx, "", endpoint, req, resp, echo)
}

// callAt is call sent to subject at, one host's own subject of endpoint
// ("" for the service's, which any host answers): with no host subscribed
// there (gone, or restarting under another name) it returns an error
// wrapping nats.ErrNoResponders at once, for the caller to ask the service.
func (c *Client) callAt(ctx context.Context, at, endpoint string, req, resp any, echo echoFunc) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	limit := c.timeout
	if limit <= 0 {
		limit = defaultTimeout(endpoint)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	inbox := c.nc.NewInbox() // under the connection's prefix (--inbox-prefix)
	answers := make(chan *nats.Msg, 64)
	// Watched before the inbox is subscribed to and the request sent: the
	// server's refusal of either may come at once.
	subject := Subject(endpoint)
	if at != "" {
		subject = at
	}
	refusal, unwatch := c.refusals.watch(subject, inbox)
	defer unwatch()
	sub, err := c.nc.ChanSubscribe(inbox, answers)
	if err != nil {
		return fmt.Errorf("%s: %w", endpoint, err)
	}
	defer func() { _ = sub.Unsubscribe() }() // best effort: the inbox is this call's alone
	resend := idempotent(endpoint)
	wait := c.waits
	if wait == nil {
		wait = attemptWait
	}
	sends, why := 0, ""
	var held *Error // the last answer that asked to send again (unavailable, no_executor)
	reconnected := c.watch.next()
	msg := &nats.Msg{Subject: subject, Reply: inbox, Data: body, Header: InjectTrace(ctx)} // the caller's trace goes on to the engine
	send := func() error {
		sends++
		if err := c.nc.PublishMsg(msg); err != nil {
			return fmt.Errorf("%s: %w", endpoint, err)
		}
		return nil
	}
	if err := send(); err != nil {
		return err
	}
	timer := time.NewTimer(wait(endpoint, 1))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				if held != nil { // the caller's deadline: the last answer's code still says why
					return fmt.Errorf("%s: sent %d times, the last answer: %w: %w", endpoint, sends, held, parent.Err())
				}
				return fmt.Errorf("%s: %w", endpoint, parent.Err())
			}
			if held != nil { // its code is the answer: what a caller branches on
				return fmt.Errorf("%s: gave up after %s (--timeout), sent %d times: %w: %w", endpoint, limit, sends, held, ctx.Err())
			}
			return c.gaveUp(endpoint, limit, sends, why, ctx.Err())
		case v := <-refusal:
			return refused(c.nc, endpoint, v)
		case <-reconnected:
			reconnected = c.watch.next()
			if !resend {
				return fmt.Errorf("%s: the connection to NATS broke while the request was in flight: %w", endpoint, errNotResent)
			}
			why = "the connection to NATS broke"
			if err := send(); err != nil {
				return err
			}
			timer.Reset(wait(endpoint, sends))
		case <-timer.C:
			if !resend {
				timer.Reset(limit) // one copy only: its answer, until the deadline
				continue
			}
			if !c.nc.IsConnected() {
				if err := c.cannotConnect(endpoint); err != nil {
					return err
				}
				why = "not connected to NATS" // sent again at the reconnect
				timer.Reset(wait(endpoint, sends))
				continue
			}
			if why == "" {
				why = fmt.Sprintf("no answer within %s", wait(endpoint, sends))
			}
			if err := send(); err != nil {
				return err
			}
			timer.Reset(wait(endpoint, sends))
		case m := <-answers:
			if m.Header.Get(statusHeader) == statusNoResponse && len(m.Data) == 0 && at != "" {
				return fmt.Errorf("%s at %s: %w", endpoint, at, nats.ErrNoResponders)
			}
			if m.Header.Get(statusHeader) == statusNoResponse && len(m.Data) == 0 {
				why = "no stepgate service is reachable (is `engine serve` running?)"
				if !resend {
					return fmt.Errorf("%s: %s: %w", endpoint, why, nats.ErrNoResponders)
				}
				timer.Reset(min(noRespondersFirst<<min(sends-1, 10), noRespondersLimit))
				continue
			}
			if code := m.Header.Get(micro.ErrorCodeHeader); code != "" {
				answer := &Error{Code: code, Message: m.Header.Get(micro.ErrorHeader)}
				if (code == CodeUnavailable || code == CodeNoExecutor) && resend { // nothing was acted on: a host stopping, or no holder of the location alive
					why, held = answer.Message, answer
					timer.Reset(min(noRespondersFirst<<min(sends-1, 10), noRespondersLimit))
					continue
				}
				if sends == 1 || echo == nil {
					return answer
				}
				done, err := echo(ctx, answer)
				if done {
					return err
				}
				why = answer.Message
				continue
			}
			if err := json.Unmarshal(m.Data, resp); err != nil {
				return fmt.Errorf("%s: decode response: %w", endpoint, err)
			}
			return nil
		}
	}
}

// gaveUp is the error of a request that had no answer by its deadline.
// cannotConnect is the error of a request that waits for a connection
// that will not come: the server refused the credentials (each attempt
// would be refused the same way), or the connection is closed. Nil while
// a reconnect may still succeed.
func (c *Client) cannotConnect(endpoint string) error {
	last := c.nc.LastError()
	if authRefusal(last) {
		who := "the connection's credentials"
		if u := natsUser(c.nc); u != "" {
			who = fmt.Sprintf("the credentials of user %q", u)
		}
		return fmt.Errorf("%s: %s: the NATS server refused %s (%v): check --user and --password-file, or --creds: %w",
			endpoint, CodeNotAuthenticated, who, last, ErrNotAuthenticated)
	}
	if c.nc.IsClosed() {
		return fmt.Errorf("%s: the connection to NATS is closed (last error: %v): %w", endpoint, last, nats.ErrConnectionClosed)
	}
	return nil
}

// authRefusal reports whether err is the server's refusal of a
// connection's credentials.
func authRefusal(err error) bool {
	return errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		errors.Is(err, nats.ErrAuthRevoked) || errors.Is(err, nats.ErrAccountAuthExpired)
}

func (c *Client) gaveUp(endpoint string, limit time.Duration, sends int, why string, err error) error {
	if why == "" {
		why = "no answer"
	}
	return fmt.Errorf("%s: gave up after %s (--timeout), sent %d times; last: %s: %w", endpoint, limit, sends, why, err)
}
