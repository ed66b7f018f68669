package notify_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands/notify"
)

// verified is the receiver's check as the README gives it, with the
// standard library only: the timestamp within five minutes, then the
// HMAC-SHA256 of timestamp "." body compared in constant time.
func verified(secret []byte, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, false
	}
	ts := r.Header.Get("Stepgate-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return nil, false // missing, or a replay of an old delivery
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := "v1=" + hex.EncodeToString(m.Sum(nil))
	return body, hmac.Equal([]byte(r.Header.Get("Stepgate-Signature")), []byte(want))
}

// The README's standard-library check accepts what Sign makes and refuses
// a changed body or an old timestamp.
func TestReadmeVerificationSnippet(t *testing.T) {
	key := []byte("k")
	req := func(at time.Time, signed, sent string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(sent))
		r.Header.Set(notify.HeaderTimestamp, strconv.FormatInt(at.Unix(), 10))
		r.Header.Set(notify.HeaderSignature, notify.Sign(key, at, []byte(signed)))
		return r
	}
	if _, ok := verified(key, req(time.Now(), "{}", "{}")); !ok {
		t.Error("refused a good delivery")
	}
	if _, ok := verified(key, req(time.Now(), "{}", `{"x":1}`)); ok {
		t.Error("accepted a changed body")
	}
	if _, ok := verified(key, req(time.Now().Add(-time.Hour), "{}", "{}")); ok {
		t.Error("accepted an hour-old delivery")
	}
}

// A receiver in Go checks each delivery with Verify before acting on it,
// and de-duplicates on the delivery id (delivery is at least once).
func ExampleVerify() {
	secret := []byte("the webhook's secret")
	seen := map[string]bool{} // a real receiver keeps these for longer than the tolerance
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		err := notify.Verify(secret, r.Header.Get(notify.HeaderTimestamp), r.Header.Get(notify.HeaderSignature), body, time.Now(), notify.DefaultTolerance)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		if id := r.Header.Get(notify.HeaderDelivery); !seen[id] {
			seen[id] = true
			fmt.Println("event:", r.Header.Get(notify.HeaderEvent))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	body := []byte(`{"delivery":"01J-2","event":"ticket_issued"}`)
	for range 2 { // the same delivery twice: acted on once
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
		now := time.Now()
		r.Header.Set(notify.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		r.Header.Set(notify.HeaderSignature, notify.Sign(secret, now, body))
		r.Header.Set(notify.HeaderDelivery, "01J-2")
		r.Header.Set(notify.HeaderEvent, "ticket_issued")
		handler.ServeHTTP(httptest.NewRecorder(), r)
	}
	// Output: event: ticket_issued
}
