package step

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/internal/strictjson"
)

// States of a host's lease record.
const (
	// LeaseHeld: the host holds its lease and renews it.
	LeaseHeld = "held"
	// LeaseTaken: another host (By) claimed the lease of a host whose
	// renewals stopped, and is settling what it left in doubt.
	LeaseTaken = "taken"
	// LeaseSettled: the host that took the lease over (By) settled what
	// the gone host left in doubt; nothing is left to take over.
	LeaseSettled = "settled"
	// LeaseReleased: the host stopped cleanly with nothing of its own in
	// doubt; nothing is left to take over.
	LeaseReleased = "released"
)

// ErrBadLease is a lease record that cannot be used: it does not decode, or
// it does not belong to the key it was stored under.
var ErrBadLease = errors.New("unusable lease record")

// Lease is one host's record in the lease bucket, under the key of its host
// name (see LeaseKey). The record is informational for people; the bucket's
// revisions are what hosts decide on (see Leases).
type Lease struct {
	// Host is whose lease this is.
	Host string `json:"host"`
	// State is LeaseHeld, LeaseTaken, LeaseSettled or LeaseReleased.
	State string `json:"state"`
	// By wrote the record: Host itself when held or released, the host that
	// took the lease over when taken or settled.
	By string `json:"by"`
	// Instance identifies the process of By that wrote the record (one per
	// start), so two processes under one name are told apart.
	Instance string `json:"instance,omitempty"`
	// TTL is how long the lease lasts without a renewal, as the writer
	// configured it.
	TTL time.Duration `json:"ttl,omitempty"`
	// At is the writer's wall clock when it wrote the record (for people:
	// no host compares another's clock with its own).
	At time.Time `json:"at"`
	// Steps is how many steps the takeover settled (LeaseSettled).
	Steps int `json:"steps,omitempty"`
}

// leaseRecord is Lease on the wire, with its version.
type leaseRecord struct {
	V int `json:"v"`
	Lease
}

// maxLeaseRecord bounds a record (a host name is at most a few hundred
// bytes; anything larger is not one of ours).
const maxLeaseRecord = 4096

// EncodeLease returns the stored form of a record.
func EncodeLease(l Lease) ([]byte, error) {
	return json.Marshal(leaseRecord{V: 1, Lease: l})
}

// DecodeLease parses the record stored under key: version 1, no unknown
// field, a known state, a writer, and a host whose key is key.
func DecodeLease(key string, data []byte) (Lease, error) {
	if len(data) > maxLeaseRecord {
		return Lease{}, fmt.Errorf("%w: %d bytes", ErrBadLease, len(data))
	}
	var r leaseRecord
	if err := strictjson.Decode(data, &r); err != nil {
		return Lease{}, fmt.Errorf("%w: %w", ErrBadLease, err)
	}
	if r.V != 1 {
		return Lease{}, fmt.Errorf("%w: version %d, want 1", ErrBadLease, r.V)
	}
	switch r.State {
	case LeaseHeld, LeaseTaken, LeaseSettled, LeaseReleased:
	default:
		return Lease{}, fmt.Errorf("%w: state %q", ErrBadLease, r.State)
	}
	if r.Host == "" || r.By == "" {
		return Lease{}, fmt.Errorf("%w: no host or writer", ErrBadLease)
	}
	if k := LeaseKey(r.Host); k != key {
		return Lease{}, fmt.Errorf("%w: host %q stored under key %q, want %q", ErrBadLease, r.Host, key, k)
	}
	return r.Lease, nil
}

// LeaseKey is the bucket key of host's lease: the name itself when it is
// made only of letters, digits, '-', '_' and inner single dots (as the
// names engine hosts get are), else "=" and the name in unpadded base64url.
// Distinct names get distinct keys.
func LeaseKey(host string) string {
	if plainKey(host) {
		return host
	}
	return "=" + base64.RawURLEncoding.EncodeToString([]byte(host))
}

// LeaseHost is the host name of a bucket key (the inverse of LeaseKey).
func LeaseHost(key string) (string, error) {
	if plainKey(key) {
		return key, nil
	}
	if len(key) > 1 && key[0] == '=' {
		b, err := base64.RawURLEncoding.Strict().DecodeString(key[1:])
		if err == nil && len(b) > 0 && LeaseKey(string(b)) == key {
			return string(b), nil
		}
	}
	return "", fmt.Errorf("%w: key %q names no host", ErrBadLease, key)
}

// plainKey reports whether s is a key as it stands: 1 to 128 of
// [A-Za-z0-9_-] and dots, no dot first or last, no two dots together.
func plainKey(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		case c == '.' && s[i-1] != '.':
		default:
			return false
		}
	}
	return true
}
