package commands

import (
	"errors"
	"testing"
)

// A cursor decodes to one that encodes back to itself, or is refused as
// invalid_request: never a panic, never a cursor the engine could not have
// given.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(ticketCursor{After: "01KDYAK3489FF6JWRXKPHAAQ4A"}.encode())
	f.Add(ticketCursor{After: "01KDYAK3489FF6JWRXKPHAAQ4A", Project: "p1", Tool: "bash", Run: "01KDYAK348Q4CBJC5CPS76Y8P5", Before: 1767323045000}.encode())
	for _, s := range []string{"", "x", "eyJ2IjoxfQ", "eyJ2IjoyLCJhZnRlciI6ImEifQ", "e30", "bnVsbA", "!!!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) || c != (ticketCursor{}) {
				t.Fatalf("decodeCursor(%q) = %+v, %v: want only invalid_request", s, c, err)
			}
			return
		}
		if c.V != 1 || !cursorID(c.After) || len(c.Run) > 128 || c.Before < 0 {
			t.Fatalf("decodeCursor(%q) accepted %+v", s, c)
		}
		again, err := decodeCursor(c.encode())
		if err != nil || again != c {
			t.Fatalf("cursor %+v encodes to one that decodes to %+v, %v", c, again, err)
		}
	})
}
