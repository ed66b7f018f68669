package step

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// LeaseBucketSuffix makes the lease bucket's name from the stream's:
// STEPGATE_LEASES for the default stream (its subjects are
// $KV.STEPGATE_LEASES.>).
const LeaseBucketSuffix = "_LEASES"

// Leases is the bucket of engine hosts' leases: a JetStream key-value bucket
// with one key per host (LeaseKey) and one revision kept per key. Every
// write but the first names the revision it replaces, so two hosts that
// race for one key cannot both win (the stream leader checks it, as it
// checks a run commit's expectation). Safe for concurrent use.
type Leases struct {
	kv     jetstream.KeyValue
	bucket string
}

// LeaseEntry is a record as stored: the record and its revision.
type LeaseEntry struct {
	Lease
	// Revision is the record's stream sequence in the bucket: what the next
	// write to the key must name.
	Revision uint64
}

// LeaseUpdate is one change the watch of the bucket saw.
type LeaseUpdate struct {
	// Key is the bucket key; Host its host name.
	Key, Host string
	// Revision is the key's new revision.
	Revision uint64
	// Deleted is true when the key was deleted or purged (Lease is zero).
	Deleted bool
	// Lease is the new record; Err is why it is unusable (ErrBadLease),
	// when it is.
	Lease Lease
	Err   error
}

// OpenLeases opens the lease bucket of the log's stream, creating it with
// the stream's replica count if it does not exist (an existing bucket keeps
// its own, as the stream does).
func OpenLeases(ctx context.Context, js jetstream.JetStream, l *Log) (*Leases, error) {
	bucket := l.Name() + LeaseBucketSuffix
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		have, _ := l.Replicas()
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1,
			Storage: jetstream.FileStorage, Replicas: have, Description: "Stepgate engine hosts' leases"})
		if errors.Is(err, jetstream.ErrBucketExists) { // another host made it first
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open lease bucket %s: %w", bucket, err)
	}
	return &Leases{kv: kv, bucket: bucket}, nil
}

// Bucket returns the bucket's name.
func (ls *Leases) Bucket() string { return ls.bucket }

// Get returns host's record; ErrNotFound when it has none. The answer may
// come from any replica: a decision on it is a later Update naming its
// revision, which the leader checks.
func (ls *Leases) Get(ctx context.Context, host string) (LeaseEntry, error) {
	key := LeaseKey(host)
	e, err := ls.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return LeaseEntry{}, fmt.Errorf("lease of %s: %w", host, ErrNotFound)
	}
	if err != nil {
		return LeaseEntry{}, fmt.Errorf("lease of %s: %w", host, err)
	}
	l, err := DecodeLease(key, e.Value())
	if err != nil {
		return LeaseEntry{Revision: e.Revision()}, fmt.Errorf("lease of %s: %w", host, err)
	}
	return LeaseEntry{Lease: l, Revision: e.Revision()}, nil
}

// Put writes l under its host's key if the key's revision is still rev
// (0: the key has no record, or was deleted) and returns the new revision.
// When another write came first it returns an error wrapping ErrConflict and
// writes nothing.
func (ls *Leases) Put(ctx context.Context, l Lease, rev uint64) (uint64, error) {
	data, err := EncodeLease(l)
	if err != nil {
		return 0, err
	}
	key := LeaseKey(l.Host)
	var n uint64
	if rev == 0 {
		n, err = ls.kv.Create(ctx, key, data)
	} else {
		n, err = ls.kv.Update(ctx, key, data, rev)
	}
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return 0, fmt.Errorf("lease of %s at revision %d: %w: %w", l.Host, rev, ErrConflict, err)
		}
		return 0, translate(fmt.Sprintf("lease of %s at revision %d", l.Host, rev), err)
	}
	return n, nil
}

// Watch sends every record of the bucket as it stands, then nil once, then
// every change, until ctx ends or the watch fails; the channel is closed
// then.
func (ls *Leases) Watch(ctx context.Context) (<-chan *LeaseUpdate, error) {
	w, err := ls.kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch lease bucket %s: %w", ls.bucket, err)
	}
	return relay(ctx, w, func(e jetstream.KeyValueEntry) (*LeaseUpdate, bool) {
		if e == nil {
			return nil, true // the end of the initial values
		}
		u := &LeaseUpdate{Key: e.Key(), Revision: e.Revision()}
		u.Host, u.Err = LeaseHost(e.Key())
		switch {
		case e.Operation() != jetstream.KeyValuePut:
			u.Deleted = true
		case u.Err == nil:
			u.Lease, u.Err = DecodeLease(e.Key(), e.Value())
		}
		return u, true
	}), nil
}
