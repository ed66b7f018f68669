package step_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// The lease bucket: a first write only where there is no record, every
// other write only at the revision it names (a stale one is ErrConflict and
// writes nothing), and the watch sends what stands, the end of it, then
// each change.
func TestLeasesCompareAndSet(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ls, err := step.OpenLeases(ctx, s.JS, s.Log)
	if err != nil {
		t.Fatal(err)
	}
	if ls.Bucket() != "STEPGATE_LEASES" {
		t.Errorf("bucket %q, want STEPGATE_LEASES", ls.Bucket())
	}
	if _, err := ls.Get(ctx, "h1"); !errors.Is(err, step.ErrNotFound) {
		t.Fatalf("Get of no record = %v, want ErrNotFound", err)
	}
	held := step.Lease{Host: "h1", State: step.LeaseHeld, By: "h1", At: time.Now().UTC()}
	r1, err := ls.Put(ctx, held, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Put(ctx, held, 0); !errors.Is(err, step.ErrConflict) {
		t.Errorf("a second first write = %v, want ErrConflict", err)
	}
	r2, err := ls.Put(ctx, held, r1)
	if err != nil {
		t.Fatal(err)
	}
	taken := step.Lease{Host: "h1", State: step.LeaseTaken, By: "h2", At: time.Now().UTC()}
	if _, err := ls.Put(ctx, taken, r1); !errors.Is(err, step.ErrConflict) {
		t.Errorf("a claim at a stale revision = %v, want ErrConflict", err)
	}
	got, err := ls.Get(ctx, "h1")
	if err != nil || got.Revision != r2 || got.State != step.LeaseHeld {
		t.Fatalf("record = %+v, %v; want held at %d", got, err, r2)
	}
	wctx, wcancel := context.WithCancel(ctx)
	ch, err := ls.Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if u := <-ch; u == nil || u.Host != "h1" || u.Revision != r2 || u.Lease.State != step.LeaseHeld {
		t.Fatalf("first update %+v, want h1 held at %d", u, r2)
	}
	if u := <-ch; u != nil {
		t.Fatalf("second update %+v, want the end of the initial records", u)
	}
	r3, err := ls.Put(ctx, taken, r2)
	if err != nil {
		t.Fatal(err)
	}
	if u := <-ch; u == nil || u.Revision != r3 || u.Lease.By != "h2" {
		t.Fatalf("update %+v, want h1 taken by h2 at %d", u, r3)
	}
	wcancel()
	for range ch {
	}
}
