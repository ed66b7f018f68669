package commands

import (
	"errors"
	"testing"
)

// A runs cursor decodes to one that encodes back to itself, or is refused
// as invalid_request: never a panic, never a cursor the engine could not
// have given.
func FuzzDecodeRunsCursor(f *testing.F) {
	f.Add(runsCursor{After: "01KDYAK3489FF6JWRXKPHAAQ4A"}.encode())
	for _, s := range []string{"", "x", "eyJ2IjoxfQ", "eyJ2IjoyLCJhZnRlciI6ImEifQ", "e30", "bnVsbA", "!!!",
		ticketCursor{After: "01KDYAK3489FF6JWRXKPHAAQ4A", Project: "p1"}.encode()} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeRunsCursor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) || c != (runsCursor{}) {
				t.Fatalf("decodeRunsCursor(%q) = %+v, %v: want only invalid_request", s, c, err)
			}
			return
		}
		if c.V != 1 || !cursorID(c.After) {
			t.Fatalf("decodeRunsCursor(%q) accepted %+v", s, c)
		}
		again, err := decodeRunsCursor(c.encode())
		if err != nil || again != c {
			t.Fatalf("cursor %+v encodes to one that decodes to %+v, %v", c, again, err)
		}
	})
}
