package commands

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// A lease is valid for its TTL less the margin from when its last renewal
// was sent, and a call decided under one epoch does not start under
// another; the wall clock counts too, so a machine that slept (the
// monotonic clock stood still) does not trust a lease it cannot have.
func TestLeaseValidity(t *testing.T) {
	t0 := time.Now()
	now := t0
	l := newHostLease(nil, "h", "i", LeaseConfig{TTL: 5 * time.Second}, func() time.Time { return now }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, ok := l.valid(); ok {
		t.Fatal("a lease never acquired is valid")
	}
	l.held, l.sent, l.epoch = true, t0, 1
	for _, tc := range []struct {
		why   string
		at    time.Duration
		valid bool
	}{
		{"just renewed", 0, true},
		{"within ttl less the margin", 3900 * time.Millisecond, true},
		{"at ttl less the margin (4s of 5s)", 4 * time.Second, false},
		{"past the ttl", 6 * time.Second, false},
	} {
		now = t0.Add(tc.at)
		if _, ok := l.valid(); ok != tc.valid {
			t.Errorf("%s: valid = %v, want %v", tc.why, ok, tc.valid)
		}
	}
	now = t0.Add(time.Second)
	if !l.holds(1) || l.holds(2) {
		t.Errorf("holds(1) = %v, holds(2) = %v; want only the current epoch", l.holds(1), l.holds(2))
	}
	l.epoch = 2 // taken over and acquired again
	if l.holds(1) {
		t.Error("a call decided under the lost lease may start under the new one")
	}
	// The monotonic reading says 1s, the wall clock says 60s (the machine
	// slept): the longer counts.
	slept := t0.Round(0).Add(60 * time.Second)
	if got := elapsed(t0, slept); got != 60*time.Second {
		t.Errorf("elapsed over a sleep = %s, want 60s", got)
	}
	if got := elapsed(t0, t0.Add(time.Second)); got != time.Second {
		t.Errorf("elapsed = %s, want 1s", got)
	}
	var none *hostLease
	if _, ok := none.valid(); !ok || !none.holds(0) {
		t.Error("a host without a lease may not start calls")
	}
}

// A lease renewed less than twice per TTL is refused.
func TestLeaseConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg LeaseConfig
		ok  bool
	}{
		{LeaseConfig{}, true},
		{LeaseConfig{TTL: 300 * time.Millisecond}, true},
		{LeaseConfig{TTL: time.Second, Renew: 500 * time.Millisecond}, true},
		{LeaseConfig{TTL: time.Second, Renew: 600 * time.Millisecond}, false},
		{LeaseConfig{TTL: -time.Second}, false},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", tc.cfg, err, tc.ok)
		}
	}
}

// A call waiting for its lease starts once the same lease is renewed (a
// NATS outage ended), and never once the lease was lost or acquired anew.
func TestLeaseWait(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l := newHostLease(nil, "h", "i", LeaseConfig{TTL: time.Second}, clock, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.mu.Lock()
	l.held, l.sent, l.epoch = true, clock(), 1
	l.mu.Unlock()
	mu.Lock()
	now = now.Add(2 * time.Second) // renewals failed: lapsed
	mu.Unlock()
	waited := make(chan bool)
	go func() { waited <- l.wait(context.Background(), 1) }()
	select {
	case got := <-waited:
		t.Fatalf("wait on a lapsed lease returned %v at once", got)
	case <-time.After(20 * time.Millisecond):
	}
	l.mu.Lock() // a renewal of the same lease succeeded
	l.sent = clock()
	l.changed()
	l.mu.Unlock()
	if !<-waited {
		t.Fatal("a call does not start once its lease is renewed")
	}
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	go func() { waited <- l.wait(context.Background(), 1) }()
	l.mu.Lock() // taken over, acquired again
	l.sent = clock()
	l.epoch = 2
	l.changed()
	l.mu.Unlock()
	if <-waited {
		t.Fatal("a call decided under a lost lease starts under the new one")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	if l.wait(ctx, 2) {
		t.Fatal("wait on a lapsed lease with an ended ctx is true")
	}
}

// A lease is due for takeover once its record stood still for a TTL, as
// this host counts it; not while this host lacks its own lease, nor for the
// time it lacked it; not when released or settled; and once per takeover.
func TestTakeoverDue(t *testing.T) {
	t0 := time.Now()
	l := newHostLease(nil, "me", "i", LeaseConfig{TTL: time.Second}, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	tk := newTakeovers(nil, l)
	tk.peers["gone"] = peer{rev: 7, state: "held", seen: t0}
	tk.peers["done"] = peer{rev: 3, state: "settled", seen: t0}
	tk.peers["left"] = peer{rev: 4, state: "released", seen: t0}
	if got := tk.due(t0.Add(900*time.Millisecond), true); len(got) != 0 {
		t.Errorf("before the ttl: due %v", got)
	}
	if got := tk.due(t0.Add(2*time.Second), false); len(got) != 0 {
		t.Errorf("without its own lease: due %v", got)
	}
	if got := tk.due(t0.Add(2100*time.Millisecond), true); len(got) != 0 {
		t.Errorf("right after getting its lease back: due %v (the blind time counted)", got)
	}
	got := tk.due(t0.Add(3100*time.Millisecond), true)
	if len(got) != 1 || got["gone"] != 7 {
		t.Errorf("a ttl after: due %v, want gone at revision 7", got)
	}
	if again := tk.due(t0.Add(4*time.Second), true); len(again) != 0 {
		t.Errorf("while its takeover runs: due %v", again)
	}
}
