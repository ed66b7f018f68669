package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands/notify"
)

// Verify accepts what Sign made within the tolerance, and refuses a
// changed body, another secret, another timestamp, a replay older than the
// tolerance, and malformed headers.
func TestSignVerify(t *testing.T) {
	key := []byte("k")
	at := time.Unix(1_800_000_000, 0)
	body := []byte(`{"event":"ticket_issued"}`)
	sig, ts := notify.Sign(key, at, body), strconv.FormatInt(at.Unix(), 10)
	tests := []struct {
		why     string
		key     []byte
		ts, sig string
		body    []byte
		now     time.Time
		want    error
	}{
		{"as signed", key, ts, sig, body, at.Add(time.Minute), nil},
		{"a receiver's clock a little behind", key, ts, sig, body, at.Add(-time.Minute), nil},
		{"a changed body", key, ts, sig, []byte(`{"event":"run_ended"}`), at, notify.ErrSignature},
		{"another secret", []byte("other"), ts, sig, body, at, notify.ErrSignature},
		{"another timestamp", key, strconv.FormatInt(at.Unix()+1, 10), sig, body, at, notify.ErrSignature},
		{"a replay older than the tolerance", key, ts, sig, body, at.Add(notify.DefaultTolerance + time.Second), notify.ErrTimestamp},
		{"a timestamp from the future", key, ts, sig, body, at.Add(-notify.DefaultTolerance - time.Second), notify.ErrTimestamp},
		{"no timestamp", key, "", sig, body, at, notify.ErrTimestamp},
		{"no version prefix", key, ts, sig[3:], body, at, notify.ErrSignature},
		{"not hex", key, ts, "v1=zz", body, at, notify.ErrSignature},
		{"a truncated signature", key, ts, sig[:20], body, at, notify.ErrSignature},
	}
	for _, tt := range tests {
		if err := notify.Verify(tt.key, tt.ts, tt.sig, tt.body, tt.now, notify.DefaultTolerance); !errors.Is(err, tt.want) {
			t.Errorf("%s: Verify = %v, want %v", tt.why, err, tt.want)
		}
	}
}

// FuzzVerify: Verify never panics, and accepts a signature only when it is
// the one Sign makes for the body and timestamp.
func FuzzVerify(f *testing.F) {
	key := []byte("k")
	at := time.Unix(1_800_000_000, 0)
	f.Add("1800000000", notify.Sign(key, at, []byte("{}")), []byte("{}"))
	f.Add("1800000000", "v1=", []byte(""))
	f.Add("-1", "v1=00", []byte("x"))
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte) {
		err := notify.Verify(key, ts, sig, body, at, notify.DefaultTolerance)
		if err != nil {
			return
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(ts + "."))
		m.Write(body)
		if _, perr := strconv.ParseInt(ts, 10, 64); perr != nil || len(sig) < 3 || upperHexToLower(sig) != "v1="+hex.EncodeToString(m.Sum(nil)) {
			t.Fatalf("accepted ts %q sig %q for %q", ts, sig, body)
		}
	})
}

// upperHexToLower lower-cases hex digits (hex decoding accepts both).
func upperHexToLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
