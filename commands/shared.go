package commands

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
)

// Runs that share rules or a catalogue share their converted form: a run's
// configuration holds pointers to it, so a host with 100,000 waiting runs
// started from one configuration holds one converted ruleset, not 100,000
// (each was about 3.5 KB of a waiting run's cost). The key is a digest of
// the content itself, never a digest the run's commit claims (a forged
// commit naming another run's policy digest with other rules must not hand
// its rules to that run). An entry lives as long as a run's configuration
// points to it.

// policy is a ruleset converted for the gate, with the records verdicts
// point to; shared, never modified.
type policy struct {
	rules   gate.Ruleset
	records []events.Rule // rules[i] as verdicts record it
}

// interned hands out one value per key while anyone holds it, through weak
// pointers: a value nobody points to is collected and its key removed.
type interned[T any] struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]weak.Pointer[T]
}

// get returns the value held for key, or makes, keeps and returns one.
func (in *interned[T]) get(key [sha256.Size]byte, make func() *T) *T {
	in.mu.Lock()
	defer in.mu.Unlock()
	if w, ok := in.m[key]; ok {
		if v := w.Value(); v != nil {
			return v
		}
	}
	if in.m == nil {
		in.m = map[[sha256.Size]byte]weak.Pointer[T]{}
	}
	v := make()
	in.m[key] = weak.Make(v)
	runtime.AddCleanup(v, in.drop, key)
	return v
}

// drop removes key once its value was collected (and not replaced since).
func (in *interned[T]) drop(key [sha256.Size]byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if w, ok := in.m[key]; ok && w.Value() == nil {
		delete(in.m, key)
	}
}

// len reports how many values are held (for tests).
func (in *interned[T]) len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.m)
}

// policyOf returns the shared converted form of rules.
func (s *sharedConfig) policyOf(rules []events.Rule) *policy {
	h := sha256.New()
	for _, r := range rules {
		for _, f := range [...]string{r.Action, r.Resource, r.Effect, r.Source, r.TicketTTL} {
			writeField(h, f)
		}
	}
	return s.policies.get([sha256.Size]byte(h.Sum(nil)), func() *policy {
		return &policy{rules: vocab.Rules(rules), records: slices.Clone(rules)}
	})
}

// catalogOf returns the shared advertised name → identity map of tools.
func (s *sharedConfig) catalogOf(tools []events.AdvertisedTool) *map[string]string {
	h := sha256.New()
	for _, t := range tools {
		writeField(h, t.Name)
		writeField(h, t.Identity)
	}
	return s.catalogs.get([sha256.Size]byte(h.Sum(nil)), func() *map[string]string {
		m := make(map[string]string, len(tools))
		for _, t := range tools {
			m[t.Name] = t.Identity
		}
		return &m
	})
}

// writeField writes f length-prefixed, so that no two lists of fields hash
// alike.
func writeField(h interface{ Write([]byte) (int, error) }, f string) {
	var n [binary.MaxVarintLen64]byte
	_, _ = h.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
	_, _ = h.Write([]byte(f))
}

// sharedConfig holds the parts of run configurations that runs share.
type sharedConfig struct {
	policies interned[policy]
	catalogs interned[map[string]string]
}
