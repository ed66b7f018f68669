package projection

import (
	"encoding/json"
	"fmt"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
	bolt "go.etcd.io/bbolt"
)

// Quarantine returns the messages this projection skipped, as of its
// sequence ([Projector.Seq]).
func (p *Projector) Quarantine() Quarantine {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idx.quarantine.UpTo(p.seq)
}

// quarantineLocked records that the message at seq on subject was skipped,
// with one warning in the log.
func (p *Projector) quarantineLocked(seq uint64, subject string, c *events.Commit, reason error) {
	e := fold.NewQuarantined(seq, subject, c, reason)
	if !p.idx.quarantine.Add(e) {
		return
	}
	p.idxDirty.quarantine = true
	p.log.Warn("quarantined a message of the log: skipped by every fold", "seq", seq, "subject", e.Subject,
		"commit", e.Commit, "reason", e.Reason)
}

var keyQuarantine = []byte("quarantine")

// encodeQuarantine is the checkpoint form of q.
func encodeQuarantine(q Quarantine) ([]byte, error) {
	b, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("encode quarantine: %w", err)
	}
	return b, nil
}

// loadQuarantine reads the quarantine from the checkpoint at Open.
func loadQuarantine(tx *bolt.Tx, q *Quarantine) error {
	v := tx.Bucket(bucketMeta).Get(keyQuarantine)
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(v, q); err != nil {
		return fmt.Errorf("checkpoint of the quarantine: %w", err)
	}
	return nil
}
