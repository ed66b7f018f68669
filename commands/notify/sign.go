package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// The headers of a delivery.
const (
	// HeaderSignature is "v1=" and the hex HMAC-SHA256, keyed with the
	// webhook's secret, of the timestamp header's value, a '.', and the
	// body as sent.
	HeaderSignature = "Stepgate-Signature"
	// HeaderTimestamp is when the attempt was signed, in Unix seconds.
	HeaderTimestamp = "Stepgate-Timestamp"
	// HeaderDelivery is the event's delivery id, the same on every attempt
	// and from every host: a receiver de-duplicates on it.
	HeaderDelivery = "Stepgate-Delivery"
	// HeaderEvent is the event's name (ticket_issued, ticket_resolved,
	// run_ended).
	HeaderEvent = "Stepgate-Event"
)

// signatureVersion prefixes the signature's hex digest.
const signatureVersion = "v1="

// DefaultTolerance is how far a receiver should let a delivery's timestamp
// be from its own clock: older deliveries are replays.
const DefaultTolerance = 5 * time.Minute

// Errors of [Verify].
var (
	// ErrSignature is a signature that does not match the body and timestamp.
	ErrSignature = errors.New("webhook signature does not match")
	// ErrTimestamp is a timestamp missing, malformed, or outside the
	// tolerance.
	ErrTimestamp = errors.New("webhook timestamp outside the tolerance")
)

// Sign returns the signature header's value for body signed at ts.
func Sign(secret []byte, ts time.Time, body []byte) string {
	return signatureVersion + hex.EncodeToString(mac(secret, strconv.FormatInt(ts.Unix(), 10), body))
}

// mac is HMAC-SHA256(secret, timestamp + "." + body).
func mac(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks a delivery as a receiver would: the timestamp header's
// value is within tolerance of now, and the signature header's value is
// the HMAC of it and the body. It compares in constant time.
func Verify(secret []byte, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	got, ok := strings.CutPrefix(signature, signatureVersion)
	if !ok {
		return ErrSignature
	}
	sum, err := hex.DecodeString(got)
	if err != nil || !hmac.Equal(sum, mac(secret, timestamp, body)) {
		return ErrSignature
	}
	return nil
}
