package projection

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/stepgate/stepgate/events"
	bolt "go.etcd.io/bbolt"
)

// bucketBlobs holds the parts of run headers that most runs share, by the
// SHA-256 of their JSON: a snapshot's rules and a catalogue's tools. A
// hundred thousand runs of one configuration store them once.
var bucketBlobs = []byte("blobs")

// blobs is the projector's copy of the shared header parts: decoded once
// and shared by every run that holds the same content (they are only ever
// read, and clipped so that an append copies). Guarded by the projector's
// lock. Entries are never dropped: there are as many as configurations.
type blobs struct {
	rules map[string][]events.Rule
	tools map[string][]events.AdvertisedTool
	// stored is the digests this process has put into the checkpoint.
	stored map[string]bool
}

func newBlobs() blobs {
	return blobs{rules: map[string][]events.Rule{}, tools: map[string][]events.AdvertisedTool{}, stored: map[string]bool{}}
}

// storedHeader is a run's header as the checkpoint stores it: its rules and
// tools stand in the blobs bucket, named here by digest. A header written
// before blobs has neither reference and holds them inline.
type storedHeader struct {
	*Run
	RulesRef string `json:"rules_ref,omitempty"`
	ToolsRef string `json:"tools_ref,omitempty"`
}

// digest names content in the blobs bucket.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// share makes *v the shared copy of its content (the one held in shared,
// or *v itself, clipped, if none is) and returns the content's digest; put
// gets its JSON when this process has not stored it yet.
func share[T any](bl *blobs, shared map[string][]T, v *[]T, put map[string][]byte) (string, error) {
	raw, err := json.Marshal(*v)
	if err != nil {
		return "", err
	}
	ref := digest(raw)
	if s, ok := shared[ref]; ok {
		*v = s
	} else {
		shared[ref] = slices.Clip(*v)
	}
	if !bl.stored[ref] {
		put[ref] = raw
	}
	return ref, nil
}

// encodeHeader encodes r without its steps, its rules and tools by
// reference; the blobs it references that this process has not stored yet
// are added to put. r's rules and tools become the shared copy.
func (bl *blobs) encodeHeader(r *Run, put map[string][]byte) ([]byte, error) {
	h := storedHeader{Run: new(Run)}
	*h.Run = *r
	h.Steps = nil
	var err error
	if len(r.Snapshot.Rules) > 0 {
		if h.RulesRef, err = share(bl, bl.rules, &r.Snapshot.Rules, put); err != nil {
			return nil, err
		}
		h.Snapshot.Rules = nil
	}
	if len(r.Catalog.Tools) > 0 {
		if h.ToolsRef, err = share(bl, bl.tools, &r.Catalog.Tools, put); err != nil {
			return nil, err
		}
		h.Catalog.Tools = nil
	}
	return json.Marshal(h)
}

// decodeHeader reads a run's header, its rules and tools from the blobs
// bucket (or the shared copies) when it references them.
func (bl *blobs) decodeHeader(tx *bolt.Tx, id string, v []byte) (*Run, error) {
	h := storedHeader{Run: new(Run)}
	if err := json.Unmarshal(v, &h); err != nil {
		return nil, fmt.Errorf("checkpoint of run %s: %w", id, err)
	}
	if h.RulesRef != "" {
		rules, err := blob(tx, bl.rules, h.RulesRef)
		if err != nil {
			return nil, fmt.Errorf("checkpoint of run %s: rules: %w", id, err)
		}
		h.Snapshot.Rules = rules
	}
	if h.ToolsRef != "" {
		tools, err := blob(tx, bl.tools, h.ToolsRef)
		if err != nil {
			return nil, fmt.Errorf("checkpoint of run %s: tools: %w", id, err)
		}
		h.Catalog.Tools = tools
	}
	return h.Run, nil
}

// blob returns the shared copy of the content under ref, reading it from
// the blobs bucket the first time.
func blob[T any](tx *bolt.Tx, shared map[string][]T, ref string) ([]T, error) {
	if v, ok := shared[ref]; ok {
		return v, nil
	}
	raw := tx.Bucket(bucketBlobs).Get([]byte(ref))
	if raw == nil || digest(raw) != ref {
		return nil, fmt.Errorf("blob %s is missing or altered: %w", ref, ErrInconsistent)
	}
	var v []T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("blob %s: %w", ref, err)
	}
	v = slices.Clip(v)
	shared[ref] = v
	return v, nil
}

// writeBlobs puts the batch's new blobs in tx.
func writeBlobs(tx *bolt.Tx, put map[string][]byte) error {
	b := tx.Bucket(bucketBlobs)
	for _, k := range slices.Sorted(maps.Keys(put)) {
		if err := b.Put([]byte(k), put[k]); err != nil {
			return err
		}
	}
	return nil
}
