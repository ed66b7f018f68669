package step

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ConfigBucketSuffix makes the fleet configuration bucket's name from the
// stream's: STEPGATE_CONFIG for the default stream.
const ConfigBucketSuffix = "_CONFIG"

// ConfigKey is the key of the fleet's user configuration in the bucket.
const ConfigKey = "user"

// MaxConfigValue bounds a value of the bucket, on the server too (the
// bucket's MaxValueSize): a configuration document is at most a
// configuration file's bytes, base64-encoded, and a little metadata.
const MaxConfigValue = 512 << 10

// configHistory is how many versions of the document the bucket keeps.
const configHistory = 16

// ConfigBucket is the bucket holding the fleet's configuration documents.
// What it holds is bytes with a revision: their meaning (and whether they
// can be trusted) is the reader's to decide. Safe for concurrent use.
type ConfigBucket struct {
	kv     jetstream.KeyValue
	bucket string
}

// ConfigEntry is one version of the document: its bytes and revision (the
// version), or a deletion.
type ConfigEntry struct {
	Value    []byte
	Revision uint64
	// Deleted is set when the key was deleted or purged.
	Deleted bool
}

// OpenConfig opens the configuration bucket of stream, creating it if it
// does not exist with replicas replicas (0: the stream's replica count, or
// 1 when the stream does not exist yet).
func OpenConfig(ctx context.Context, js jetstream.JetStream, stream string, replicas int) (*ConfigBucket, error) {
	bucket := stream + ConfigBucketSuffix
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		if replicas <= 0 {
			replicas = 1
			if s, serr := js.Stream(ctx, stream); serr == nil {
				replicas = s.CachedInfo().Config.Replicas
			}
		}
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: configHistory,
			Storage: jetstream.FileStorage, Replicas: replicas, MaxValueSize: MaxConfigValue,
			Description: "Stepgate fleet configuration"})
		if errors.Is(err, jetstream.ErrBucketExists) { // another host or a push made it first
			kv, err = js.KeyValue(ctx, bucket)
		}
	}
	if err != nil {
		return nil, translate(fmt.Sprintf("open configuration bucket %s", bucket), err)
	}
	return &ConfigBucket{kv: kv, bucket: bucket}, nil
}

// Bucket returns the bucket's name.
func (cb *ConfigBucket) Bucket() string { return cb.bucket }

// Get returns the current document; ok is false when there is none (never
// written, or deleted).
func (cb *ConfigBucket) Get(ctx context.Context) (e ConfigEntry, ok bool, err error) {
	got, err := cb.kv.Get(ctx, ConfigKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return ConfigEntry{}, false, nil
	}
	if err != nil {
		return ConfigEntry{}, false, translate(fmt.Sprintf("read %s/%s", cb.bucket, ConfigKey), err)
	}
	return ConfigEntry{Value: got.Value(), Revision: got.Revision()}, true, nil
}

// Put writes value as the new document and returns its revision. A value
// larger than MaxConfigValue is refused by the server.
func (cb *ConfigBucket) Put(ctx context.Context, value []byte) (uint64, error) {
	if len(value) > MaxConfigValue {
		return 0, fmt.Errorf("write %s/%s: %d bytes, more than the %d a document may hold", cb.bucket, ConfigKey, len(value), MaxConfigValue)
	}
	rev, err := cb.kv.Put(ctx, ConfigKey, value)
	if err != nil {
		return 0, translate(fmt.Sprintf("write %s/%s", cb.bucket, ConfigKey), err)
	}
	return rev, nil
}

// Watch sends every change of the document from now on (after the current
// one, which it sends first when there is one) until ctx is done, then
// closes the channel. The watch rides out reconnects (nats.go's ordered
// consumer); the channel closes early only if the watch itself stops.
func (cb *ConfigBucket) Watch(ctx context.Context) (<-chan ConfigEntry, error) {
	w, err := cb.kv.Watch(ctx, ConfigKey)
	if err != nil {
		return nil, fmt.Errorf("watch %s/%s: %w", cb.bucket, ConfigKey, err)
	}
	return relay(ctx, w, func(e jetstream.KeyValueEntry) (ConfigEntry, bool) {
		if e == nil { // the end of the initial values
			return ConfigEntry{}, false
		}
		return ConfigEntry{Value: e.Value(), Revision: e.Revision(), Deleted: e.Operation() != jetstream.KeyValuePut}, true
	}), nil
}
