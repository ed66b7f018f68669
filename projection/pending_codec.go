package projection

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// pendingForm is the first byte of a pending ticket's checkpoint value.
// Older checkpoints stored the ticket's run id there, which never begins
// with it (a ULID begins with a digit).
const pendingForm = 1

// maxPendingField bounds a field of a pending ticket's checkpoint value.
const maxPendingField = 4096

// encodePending is the checkpoint form of a pending ticket (its id is the
// key): the form byte, the step and the deadline (Unix nanoseconds, 0 for
// none) as varints, then run, project, tool and identity, each a uvarint
// length and its bytes. It is read at every start, a hundred thousand at a
// time, so it is not JSON.
func encodePending(t *PendingTicket) []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(t.Run)+len(t.Project)+len(t.Tool)+len(t.Identity)+4*binary.MaxVarintLen16)
	b = append(b, pendingForm)
	b = binary.AppendUvarint(b, uint64(t.Step))
	var dl int64
	if t.Deadline != nil {
		dl = t.Deadline.UnixNano()
	}
	b = binary.AppendVarint(b, dl)
	for _, s := range []string{t.Run, t.Project, t.Tool, t.Identity} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// decodePending reads the checkpoint form of pending ticket id; intern
// gives the strings many tickets share (projects, tools, identities) one
// copy. Anything but what encodePending writes is an error wrapping
// ErrInconsistent.
func decodePending(id string, v []byte, intern func([]byte) string) (PendingTicket, error) {
	t := PendingTicket{ID: id}
	bad := func(what string) (PendingTicket, error) {
		return PendingTicket{}, fmt.Errorf("checkpoint of pending ticket %s: %s: %w", id, what, ErrInconsistent)
	}
	if len(v) == 0 || v[0] != pendingForm {
		return bad("unknown form")
	}
	v = v[1:]
	step, n := binary.Uvarint(v)
	if n <= 0 || step > 1<<31 {
		return bad("step")
	}
	v = v[n:]
	dl, n := binary.Varint(v)
	if n <= 0 {
		return bad("deadline")
	}
	v = v[n:]
	t.Step = int(step)
	if dl != 0 {
		d := time.Unix(0, dl).UTC()
		t.Deadline = &d
	}
	for i, f := range []*string{&t.Run, &t.Project, &t.Tool, &t.Identity} {
		l, n := binary.Uvarint(v)
		if n <= 0 || l > maxPendingField || l > uint64(len(v)-n) {
			return bad(fmt.Sprintf("field %d", i))
		}
		s := v[n : n+int(l)]
		if i == 0 {
			*f = string(s) // one run, one ticket or a few: nothing to share
		} else {
			*f = intern(s)
		}
		v = v[n+int(l):]
	}
	if len(v) != 0 {
		return bad("trailing bytes")
	}
	return t, nil
}

// loadPending reads one entry of the pending bucket into the index. A
// checkpoint written before the index held more than the ticket's run
// stores only the run's id: the rest is read from the run's header once,
// and the entry is written in the new form at the next checkpoint.
func loadPending(tx *bolt.Tx, idx *indexes, id string, v []byte) error {
	if len(v) > 0 && v[0] == pendingForm {
		t, err := decodePending(id, v, idx.pending.intern)
		if err != nil {
			return err
		}
		idx.pending.add(t)
		return nil
	}
	run := string(v)
	var h struct {
		Tickets []Ticket `json:"tickets"`
	}
	if raw := tx.Bucket(bucketRuns).Get(v); raw != nil {
		if err := json.Unmarshal(raw, &h); err != nil {
			return fmt.Errorf("checkpoint of run %s: %w", run, err)
		}
	}
	t := PendingTicket{ID: id, Run: run}
	for i := range h.Tickets {
		if h.Tickets[i].ID == id {
			t = pendingTicket(run, h.Tickets[i].Step, h.Tickets[i].TicketIssued)
		}
	}
	idx.pending.add(t)
	idx.migrated = append(idx.migrated, id)
	return nil
}
