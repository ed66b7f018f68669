package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/stepgate/stepgate/agent/model"
)

// redacted replaces the API key wherever a message would carry it.
const redacted = "[redacted]"

// failure turns an SDK error into what the loop branches on: the caller's
// own cancellation is returned as it is (wrapped), everything else is a
// *model.Error with the status, whether a retry may help, the provider's
// Retry-After and the provider's own message, with the API key removed.
func failure(ctx context.Context, err error, key string, now func() time.Time) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		msg := oe.Message
		if msg == "" {
			msg = bodyMessage(responseBody(oe.Response), oe.StatusCode)
		}
		return statusError(oe.StatusCode, header(oe.Response), msg, key, now)
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = bodyMessage(ae.RawJSON(), ae.StatusCode)
		}
		if ae.StatusCode < 400 {
			// An error event in a stream that had started (200): its
			// type says whether a retry may help.
			return midStream(errorType(ae.RawJSON()), msg, key)
		}
		return statusError(ae.StatusCode, header(ae.Response), msg, key, now)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// OpenAI: {"error": {...}} in a stream that had started.
		var ev struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		msg := se.Message
		if json.Unmarshal(se.Event.Data, &ev) == nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		return midStream(ev.Error.Type, msg, key)
	}
	return &model.Error{Retryable: transient(err), Message: scrub(err.Error(), key)}
}

// midStream is the *model.Error of an error event in a started stream
// (status 0): final only when the provider says the request itself was
// wrong.
func midStream(typ, msg, key string) *model.Error {
	final := typ == "invalid_request_error" || typ == "authentication_error" || typ == "permission_error"
	return &model.Error{Retryable: !final, Message: scrub(msg, key)}
}

// errorType reads error.type of an error body.
func errorType(raw string) string {
	var b struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(raw), &b)
	return b.Error.Type
}

// statusError is the *model.Error of an HTTP refusal.
func statusError(status int, h http.Header, msg, key string, now func() time.Time) *model.Error {
	return &model.Error{
		Status:     status,
		Retryable:  retryableStatus(status),
		RetryAfter: retryAfter(h, now()),
		Message:    scrub(msg, key),
	}
}

func header(r *http.Response) http.Header {
	if r == nil {
		return nil
	}
	return r.Header
}

// responseBody is an error response's body, which the SDK has kept for
// reading again.
func responseBody(r *http.Response) string {
	if r == nil || r.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	return string(b)
}

// bodyMessage is what to say when the error body had no message where the
// SDK looks (an OpenAI-compatible server answering in its own shape): a
// top-level "message" (vLLM) or a string "detail" (FastAPI), else the body
// itself, cut short.
func bodyMessage(raw string, status int) string {
	raw = strings.TrimSpace(raw)
	var shape struct {
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	if json.Unmarshal([]byte(raw), &shape) == nil {
		if shape.Message != "" {
			return shape.Message
		}
		if d, ok := shape.Detail.(string); ok && d != "" {
			return d
		}
	}
	if raw != "" {
		const max = 500
		if len(raw) > max {
			raw = raw[:max] + "…"
		}
		return raw
	}
	return http.StatusText(status)
}

// retryableStatus: a timeout, a rate limit, or the provider's own failure
// (5xx, including Anthropic's 529 overloaded).
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// transient is a transport failure a retry may cure: a timeout, a reset or
// refused connection, a stream cut short.
func transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// retryAfter reads retry-after-ms (milliseconds, possibly fractional), then
// Retry-After (seconds, or an HTTP date relative to now). Absent, invalid
// or past: 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// scrub removes the key from s.
func scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, redacted)
}
