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

// encodeHeader encodes r without its steps, its rules and tools by
// reference; the blobs it references that this process has not stored yet
// are added to put. r's rules and tools become the shared copy.
func (bl *blobs) encodeHeader(r *Run, put map[string][]byte) ([]byte, error) {
	h := storedHeader{Run: new(Run)}
	*h.Run = *r
	h.Steps = nil
	if len(r.Snapshot.Rules) > 0 {
		raw, err := json.Marshal(r.Snapshot.Rules)
		if err != nil {
			return nil, err
		}
		h.RulesRef = digest(raw)
		if shared, ok := bl.rules[h.RulesRef]; ok {
			r.Snapshot.Rules = shared
		} else {
			bl.rules[h.RulesRef] = slices.Clip(r.Snapshot.Rules)
		}
		if !bl.stored[h.RulesRef] {
			put[h.RulesRef] = raw
		}
		h.Snapshot.Rules = nil
	}
	if len(r.Catalog.Tools) > 0 {
		raw, err := json.Marshal(r.Catalog.Tools)
		if err != nil {
			return nil, err
		}
		h.ToolsRef = digest(raw)
		if shared, ok := bl.tools[h.ToolsRef]; ok {
			r.Catalog.Tools = shared
		} else {
			bl.tools[h.ToolsRef] = slices.Clip(r.Catalog.Tools)
		}
		if !bl.stored[h.ToolsRef] {
			put[h.ToolsRef] = raw
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
