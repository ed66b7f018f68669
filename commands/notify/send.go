package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/stepgate/stepgate/internal/backoff"
)

// maxResponse bounds what is read of a receiver's answer (then discarded).
const maxResponse = 64 << 10

// errPermanent marks an answer that another attempt would not change: a
// redirect (never followed) or a 4xx other than 408, 425 and 429.
var errPermanent = errors.New("refused by the receiver")

// send delivers body to hook, trying up to cfg.Attempts times with a
// jittered exponential backoff between attempts, and returns how many
// attempts it made and, when none was answered 2xx, the last error. A
// cancelled ctx stops at once with ctx's error.
func (d *Deliverer) send(ctx context.Context, hook Hook, event, delivery string, body []byte) (int, error) {
	var err error
	for n := 1; ; n++ {
		if err = d.attempt(ctx, hook, event, delivery, body); err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return n, context.Cause(ctx)
		}
		if errors.Is(err, errPermanent) || n >= d.cfg.Attempts {
			return n, err
		}
		d.cfg.Metrics.Retried(event)
		d.log.Debug("webhook: attempt failed; retrying", "url", hook.Where(), "event", event, "delivery", delivery, "attempt", n, "err", err)
		t := time.NewTimer(d.backoff(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return n, context.Cause(ctx)
		case <-t.C:
		}
	}
}

// backoff is the wait after attempt n (from 1): Backoff doubled n-1 times,
// at most MaxBackoff, then a uniformly random part of it between a half and
// the whole (so hosts retrying the same receiver spread out).
func (d *Deliverer) backoff(n int) time.Duration {
	return backoff.Delay(d.cfg.Backoff, d.cfg.MaxBackoff, n)
}

// attempt is one POST, bounded by cfg.AttemptTimeout; nil when the
// receiver answered 2xx.
func (d *Deliverer) attempt(ctx context.Context, hook Hook, event, delivery string, body []byte) error {
	actx, cancel := context.WithTimeout(ctx, d.cfg.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, hook.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	now := d.cfg.Clock()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "stepgate-webhook/"+d.cfg.Version)
	req.Header.Set(HeaderEvent, event)
	req.Header.Set(HeaderDelivery, delivery)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, Sign(hook.Secret, now, body))
	resp, err := d.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = hook.Where() // the path and query may be a capability
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	_ = resp.Body.Close()
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusRequestTimeout, s == http.StatusTooEarly, s == http.StatusTooManyRequests, s >= 500:
		return fmt.Errorf("POST %s: %s", hook.Where(), resp.Status)
	default:
		return fmt.Errorf("POST %s: %s: %w", hook.Where(), resp.Status, errPermanent)
	}
}
