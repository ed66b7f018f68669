package projection

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A pending ticket's checkpoint form decodes to a ticket that encodes back
// to exactly that form, or is refused as inconsistent: never a panic.
func FuzzDecodePending(f *testing.F) {
	dl := time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC)
	f.Add(encodePending(&PendingTicket{ID: "t", Run: "01KDYAK348Q4CBJC5CPS76Y8P5", Step: 3, Project: "p1", Tool: "bash", Identity: "builtin:bash@ab", Deadline: &dl}))
	f.Add(encodePending(&PendingTicket{ID: "t", Run: "r"}))
	f.Add([]byte("01KDYAK348Q4CBJC5CPS76Y8P5")) // the older form: a run id
	f.Add([]byte{pendingForm, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte{pendingForm, 1, 0, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, v []byte) {
		x := newPendingIndex()
		got, err := decodePending("t", v, x.intern)
		if err != nil {
			if !errors.Is(err, ErrInconsistent) {
				t.Fatalf("decodePending(%x): %v, want ErrInconsistent", v, err)
			}
			return
		}
		again, err := decodePending("t", encodePending(&got), x.intern)
		if err != nil {
			t.Fatalf("decodePending(%x) = %+v, which does not decode again: %v", v, got, err)
		}
		if d := cmp.Diff(got, again); d != "" {
			t.Fatalf("decodePending(%x) does not survive a round trip:\n%s", v, d)
		}
	})
}
