package fold

import (
	"slices"
	"unicode/utf8"

	"github.com/stepgate/stepgate/events"
)

// QuarantineKeep is how many quarantined messages a projection keeps listed
// (the latest by stream sequence); [Quarantine.Total] counts every one.
const QuarantineKeep = 1000

// Quarantined is one message of the log that no fold applied: it could not
// be decoded, did not belong to the subject it was stored on, or could not
// be applied to its run. Every fold skips it the same way.
type Quarantined struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	// Commit is the envelope's id, when the message decoded.
	Commit string `json:"commit,omitempty"`
	Reason string `json:"reason"`
}

// Quarantine is a projection's record of the messages it skipped: the
// latest [QuarantineKeep] in stream order, and how many there were.
type Quarantine struct {
	Total  uint64        `json:"total"`
	Recent []Quarantined `json:"recent,omitempty"`
}

// quarantineFieldMax bounds each text field of an entry: subjects, commit
// ids and reasons come from whoever published the message.
const quarantineFieldMax = 512

// NewQuarantined is the entry for the message at seq on subject; c is its
// envelope when it decoded. Its text fields are clipped: subjects, commit
// ids and reasons come from whoever published the message.
func NewQuarantined(seq uint64, subject string, c *events.Commit, reason error) Quarantined {
	q := Quarantined{Seq: seq, Subject: clip(subject), Reason: clip(reason.Error())}
	if c != nil {
		q.Commit = clip(c.ID)
	}
	return q
}

// clip shortens s to quarantineFieldMax bytes of valid UTF-8.
func clip(s string) string {
	if len(s) > quarantineFieldMax {
		s = s[:quarantineFieldMax] + "…"
	}
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // invalid bytes become U+FFFD, as JSON would
	}
	return s
}

// Add records e, keeping the list ordered by sequence and bounded; a
// sequence recorded already (a message met again after a restart) is not
// counted twice. It reports whether e was new.
func (q *Quarantine) Add(e Quarantined) bool {
	i, found := slices.BinarySearchFunc(q.Recent, e.Seq, func(x Quarantined, seq uint64) int {
		switch {
		case x.Seq < seq:
			return -1
		case x.Seq > seq:
			return 1
		}
		return 0
	})
	if found {
		return false
	}
	q.Total++
	if len(q.Recent) >= QuarantineKeep && i == 0 {
		return true // older than everything kept
	}
	q.Recent = slices.Insert(q.Recent, i, e)
	if over := len(q.Recent) - QuarantineKeep; over > 0 {
		q.Recent = slices.Delete(q.Recent, 0, over)
	}
	return true
}

// UpTo returns the quarantine as of stream sequence seq: the entries at or
// below it (a projector may have folded its own commits past its sequence).
func (q Quarantine) UpTo(seq uint64) Quarantine {
	out := Quarantine{Total: q.Total}
	for _, e := range q.Recent {
		if e.Seq <= seq {
			out.Recent = append(out.Recent, e)
		} else {
			out.Total--
		}
	}
	return out
}
