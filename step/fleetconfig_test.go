package step_test

import (
	"context"
	"testing"
	"time"

	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// The configuration bucket holds one document: none at first, then each
// write as a new revision; a watch sends the current one and every write
// after it; a value past MaxConfigValue is refused.
func TestConfigBucket(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := step.OpenConfig(ctx, s.JS, step.DefaultStream, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Bucket() != "STEPGATE_CONFIG" {
		t.Errorf("bucket %s, want STEPGATE_CONFIG", b.Bucket())
	}
	if _, ok, err := b.Get(ctx); ok || err != nil {
		t.Fatalf("a new bucket: ok %v, %v; want no document", ok, err)
	}
	if rev, err := b.Put(ctx, []byte("one")); err != nil || rev != 1 {
		t.Fatalf("first put: revision %d, %v", rev, err)
	}
	updates, err := b.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rev, err := b.Put(ctx, []byte("two")); err != nil || rev != 2 {
		t.Fatalf("second put: revision %d, %v", rev, err)
	}
	for _, want := range []step.ConfigEntry{{Value: []byte("one"), Revision: 1}, {Value: []byte("two"), Revision: 2}} {
		got := <-updates
		if string(got.Value) != string(want.Value) || got.Revision != want.Revision || got.Deleted {
			t.Fatalf("watch sent %+v, want %+v", got, want)
		}
	}
	e, ok, err := b.Get(ctx)
	if err != nil || !ok || string(e.Value) != "two" || e.Revision != 2 {
		t.Fatalf("get: %+v %v %v", e, ok, err)
	}
	if _, err := b.Put(ctx, make([]byte, step.MaxConfigValue+1)); err == nil {
		t.Fatal("a value past MaxConfigValue was written")
	}
	// Reopened, it is the same bucket.
	again, err := step.OpenConfig(ctx, s.JS, step.DefaultStream, 3)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := again.Get(ctx); !ok || e.Revision != 2 {
		t.Fatalf("reopened: %+v %v", e, ok)
	}
}
