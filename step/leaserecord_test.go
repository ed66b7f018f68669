package step

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Lease keys: plain names as they are, others encoded; every key decodes to
// its name and is a valid bucket key.
func TestLeaseKey(t *testing.T) {
	for _, tc := range []struct{ host, key string }{
		{"h1", "h1"},
		{"vm-854cfcbc", "vm-854cfcbc"},
		{"a.b_c", "a.b_c"},
		{"a..b", "=YS4uYg"},
		{".a", "=LmE"},
		{"a.", "=YS4"},
		{"x/y", "=eC95"},
		{"=x", "=PXg"},
		{"host:1", "=aG9zdDox"},
	} {
		if got := LeaseKey(tc.host); got != tc.key {
			t.Errorf("LeaseKey(%q) = %q, want %q", tc.host, got, tc.key)
		}
		if got, err := LeaseHost(tc.key); err != nil || got != tc.host {
			t.Errorf("LeaseHost(%q) = %q, %v; want %q", tc.key, got, err, tc.host)
		}
	}
	for _, key := range []string{"", "=", "=!!", "=YS4", "a..b", "=aDE"} { // "=aDE" is h1's encoding, which is never used
		if host, err := LeaseHost(key); err == nil && LeaseKey(host) != key {
			t.Errorf("LeaseHost(%q) = %q, whose key is %q", key, host, LeaseKey(host))
		}
	}
	if _, err := LeaseHost("=aDE"); err == nil {
		t.Error("a second key for one host is accepted")
	}
}

// A record decodes only under its host's key, with a known state and a
// writer, and round-trips.
func TestDecodeLease(t *testing.T) {
	l := Lease{Host: "h1", State: LeaseTaken, By: "h2", Instance: "i", TTL: 5 * time.Second, At: time.Unix(1, 0).UTC(), Steps: 2}
	b, err := EncodeLease(l)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeLease("h1", b)
	if err != nil || got != l {
		t.Fatalf("DecodeLease = %+v, %v; want %+v", got, err, l)
	}
	for _, tc := range []struct{ why, key, data string }{
		{"another host's key", "h2", string(b)},
		{"unknown state", "h1", `{"v":1,"host":"h1","state":"mine","by":"h1","at":"2026-01-01T00:00:00Z"}`},
		{"no writer", "h1", `{"v":1,"host":"h1","state":"held","at":"2026-01-01T00:00:00Z"}`},
		{"version 2", "h1", `{"v":2,"host":"h1","state":"held","by":"h1","at":"2026-01-01T00:00:00Z"}`},
		{"unknown field", "h1", `{"v":1,"host":"h1","state":"held","by":"h1","x":1}`},
		{"two values", "h1", `{"v":1,"host":"h1","state":"held","by":"h1"} {}`},
		{"not JSON", "h1", "taken"},
		{"too large", "h1", `{"v":1,"host":"h1","state":"held","by":"` + strings.Repeat("x", maxLeaseRecord) + `"}`},
	} {
		if _, err := DecodeLease(tc.key, []byte(tc.data)); !errors.Is(err, ErrBadLease) {
			t.Errorf("%s: DecodeLease = %v, want ErrBadLease", tc.why, err)
		}
	}
}

// FuzzDecodeLease: any bytes under any key decode to a record that belongs
// to that key and round-trips, or to ErrBadLease; never a panic.
func FuzzDecodeLease(f *testing.F) {
	f.Add("h1", []byte(`{"v":1,"host":"h1","state":"held","by":"h1","at":"2026-01-01T00:00:00Z"}`))
	f.Add("=YS4uYg", []byte(`{"v":1,"host":"a..b","state":"settled","by":"c","steps":3,"at":"2026-01-01T00:00:00Z"}`))
	f.Add("h1", []byte(`{"v":1}`))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		l, err := DecodeLease(key, data)
		if err != nil {
			if !errors.Is(err, ErrBadLease) {
				t.Fatalf("error %v is not ErrBadLease", err)
			}
			return
		}
		if LeaseKey(l.Host) != key {
			t.Fatalf("record of %q decoded under key %q", l.Host, key)
		}
		b, err := EncodeLease(l)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeLease(key, b)
		if err != nil || !again.At.Equal(l.At) || again.Host != l.Host || again.State != l.State || again.By != l.By {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, l)
		}
	})
}

// FuzzLeaseKey: every host name has one key, a valid bucket key, that
// decodes to the name; a key decodes only to a name whose key it is.
func FuzzLeaseKey(f *testing.F) {
	for _, s := range []string{"h1", "a..b", ".a", "=x", "host:1", "", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s != "" {
			k := LeaseKey(s)
			if !validKey(k) {
				t.Fatalf("LeaseKey(%q) = %q is not a valid key", s, k)
			}
			if h, err := LeaseHost(k); err != nil || h != s {
				t.Fatalf("LeaseHost(LeaseKey(%q)) = %q, %v", s, h, err)
			}
		}
		if h, err := LeaseHost(s); err == nil && LeaseKey(h) != s {
			t.Fatalf("LeaseHost(%q) = %q, whose key is %q", s, h, LeaseKey(h))
		}
	})
}

// validKey is the key-value bucket's rule for a key.
func validKey(k string) bool {
	if k == "" || k[0] == '.' || k[len(k)-1] == '.' || strings.Contains(k, "..") {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-/_=.", c)) {
			return false
		}
	}
	return true
}
