package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/internal/strictjson"
)

// HolderBucketSuffix makes the holders bucket's name from the stream's:
// STEPGATE_HOLDERS for the default stream.
const HolderBucketSuffix = "_HOLDERS"

// maxHolderRecord bounds a record: a host declares a few globs.
const maxHolderRecord = 16 << 10

// maxHolderGlobs bounds the globs one host declares.
const maxHolderGlobs = 64

// ErrBadHolder is a holder record that cannot be used: it does not decode,
// or does not belong to the key it was stored under.
var ErrBadHolder = errors.New("unusable holder record")

// Holder is one host's announcement of the locations it holds, under the
// key of its host name (LeaseKey): its liveness is its lease's.
type Holder struct {
	// Host is the announcing host.
	Host string `json:"host"`
	// Instance identifies the process that wrote the record (one per start).
	Instance string `json:"instance,omitempty"`
	// Locations are the globs (absolute paths, doublestar patterns) of the
	// directories the host holds; none: whatever exists on its own
	// filesystem.
	Locations []string `json:"locations,omitempty"`
	// At is the writer's wall clock when it wrote the record (for people).
	At time.Time `json:"at"`
}

// holderRecord is Holder on the wire, with its version.
type holderRecord struct {
	V int `json:"v"`
	Holder
}

// EncodeHolder returns the stored form of a record.
func EncodeHolder(h Holder) ([]byte, error) {
	return json.Marshal(holderRecord{V: 1, Holder: h})
}

// DecodeHolder parses the record stored under key: version 1, no unknown
// field, a host whose key is key, at most 64 globs, each a clean absolute
// path pattern.
func DecodeHolder(key string, data []byte) (Holder, error) {
	if len(data) > maxHolderRecord {
		return Holder{}, fmt.Errorf("%w: %d bytes", ErrBadHolder, len(data))
	}
	var r holderRecord
	if err := strictjson.Decode(data, &r); err != nil {
		return Holder{}, fmt.Errorf("%w: %w", ErrBadHolder, err)
	}
	switch {
	case r.V != 1:
		return Holder{}, fmt.Errorf("%w: version %d", ErrBadHolder, r.V)
	case r.Host == "" || LeaseKey(r.Host) != key:
		return Holder{}, fmt.Errorf("%w: host %q under key %q", ErrBadHolder, r.Host, key)
	case len(r.Locations) > maxHolderGlobs:
		return Holder{}, fmt.Errorf("%w: %d globs, at most %d", ErrBadHolder, len(r.Locations), maxHolderGlobs)
	}
	for _, g := range r.Locations {
		if !filepath.IsAbs(g) || filepath.Clean(g) != g {
			return Holder{}, fmt.Errorf("%w: glob %q is not a clean absolute path", ErrBadHolder, g)
		}
	}
	return r.Holder, nil
}

// Holders is the bucket of hosts' announcements (see Holder). Safe for
// concurrent use.
type Holders struct {
	kv     jetstream.KeyValue
	bucket string
}

// HolderUpdate is one change the watch of the bucket saw.
type HolderUpdate struct {
	// Host is the record's host name.
	Host string
	// Deleted is true when the key was deleted or purged.
	Deleted bool
	// Holder is the new record; Err is why it is unusable, when it is.
	Holder Holder
	Err    error
}

// OpenHolders opens the holders bucket of the log's stream, creating it
// with the stream's replica count if it does not exist.
func OpenHolders(ctx context.Context, js jetstream.JetStream, l *Log) (*Holders, error) {
	bucket := l.Name() + HolderBucketSuffix
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		have, _ := l.Replicas()
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1,
			Storage: jetstream.FileStorage, Replicas: have, Description: "Stepgate hosts' locations"})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, translate(fmt.Sprintf("open holders bucket %s", bucket), err)
	}
	return &Holders{kv: kv, bucket: bucket}, nil
}

// Put writes h under its host's key.
func (hs *Holders) Put(ctx context.Context, h Holder) error {
	data, err := EncodeHolder(h)
	if err != nil {
		return err
	}
	if _, err := hs.kv.Put(ctx, LeaseKey(h.Host), data); err != nil {
		return translate(fmt.Sprintf("announce the locations of %s", h.Host), err)
	}
	return nil
}

// Watch sends every record of the bucket as it stands, then nil once, then
// every change, until ctx ends or the watch fails; the channel is closed
// then.
func (hs *Holders) Watch(ctx context.Context) (<-chan *HolderUpdate, error) {
	w, err := hs.kv.WatchAll(ctx)
	if err != nil {
		return nil, translate(fmt.Sprintf("watch holders bucket %s", hs.bucket), err)
	}
	return relay(ctx, w, func(e jetstream.KeyValueEntry) (*HolderUpdate, bool) {
		if e == nil {
			return nil, true // the end of the initial values
		}
		u := &HolderUpdate{}
		u.Host, u.Err = LeaseHost(e.Key())
		switch {
		case e.Operation() != jetstream.KeyValuePut:
			u.Deleted = true
		case u.Err == nil:
			u.Holder, u.Err = DecodeHolder(e.Key(), e.Value())
		}
		return u, true
	}), nil
}
