package commands

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
)

// maxCursor bounds a cursor's length: a longer one is refused unread.
const maxCursor = 1024

// ticketCursor is where a page of tickets ended, and the query it belongs
// to: the next page continues the same query, whatever filters the request
// repeats. It travels as an opaque string (cursor, base64 of JSON); a
// client must not build one.
type ticketCursor struct {
	V       int    `json:"v"`
	After   string `json:"after"`
	Project string `json:"project,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Run     string `json:"run,omitempty"`
	// Before is the query's older_than as a time (Unix milliseconds): fixed
	// when the first page was asked, so every page lists the same tickets.
	Before int64 `json:"before,omitempty"`
}

// encode returns the cursor's opaque form.
func (c ticketCursor) encode() string {
	c.V = 1
	return encodeCursor(c)
}

// encodeCursor is the opaque form of a page's cursor c (a struct of
// strings and numbers): base64 of its JSON, the one form of the tickets'
// and the runs' cursors.
func encodeCursor(c any) string {
	b, _ := json.Marshal(c) // strings and numbers only: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// readCursor decodes the opaque form s into c; anything but the form
// encodeCursor writes, within maxCursor, is an error wrapping
// ErrInvalidRequest. The caller checks the fields.
func readCursor(s string, c any) error {
	if len(s) > maxCursor {
		return fmt.Errorf("cursor: longer than %d characters: %w", maxCursor, ErrInvalidRequest)
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("cursor: not one this engine gave: %w: %w", ErrInvalidRequest, err)
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return fmt.Errorf("cursor: not one this engine gave: %w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// decodeCursor reads a cursor that a previous page returned. Anything else
// is an error wrapping ErrInvalidRequest.
func decodeCursor(s string) (ticketCursor, error) {
	var c ticketCursor
	if err := readCursor(s, &c); err != nil {
		return ticketCursor{}, err
	}
	switch {
	case c.V != 1:
		return ticketCursor{}, fmt.Errorf("cursor: version %d: %w", c.V, ErrInvalidRequest)
	case !cursorID(c.After) || len(c.Run) > 128:
		return ticketCursor{}, fmt.Errorf("cursor: not one this engine gave: %w", ErrInvalidRequest)
	case len(c.Project) > 64 || len(c.Tool) > 256 || c.Before < 0:
		return ticketCursor{}, fmt.Errorf("cursor: not one this engine gave: %w", ErrInvalidRequest)
	}
	return c, nil
}

// cursorID reports whether s can be a ticket id: 1 to 128 letters,
// digits, '-', '_' or '.'.
func cursorID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := range len(s) {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			return false
		}
	}
	return true
}

// before returns the cursor's time bound (zero: none).
func (c ticketCursor) before() time.Time {
	if c.Before == 0 {
		return time.Time{}
	}
	return time.UnixMilli(c.Before)
}
