package events

import (
	"bufio"
	"crypto/rand"
	"io"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// IDSource issues ULIDs. It is injected wherever ids are made so that tests can
// use a deterministic source. Safe for concurrent use.
type IDSource struct {
	mu      sync.Mutex
	entropy io.Reader
}

// NewIDSource returns a source reading entropy from r; nil means crypto/rand
// (read through a buffer, so one system call serves hundreds of ids), which
// gives ULIDs with 80 unguessable random bits.
func NewIDSource(r io.Reader) *IDSource {
	if r == nil {
		r = bufio.NewReaderSize(rand.Reader, 4096)
	}
	return &IDSource{entropy: r}
}

// New returns a fresh ULID string for time t.
func (s *IDSource) New(t time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), s.entropy).String()
}

// ValidID reports whether s is a canonical ULID string (and so a safe subject
// token): 26 characters of upper-case Crockford base32, the first at most '7'.
func ValidID(s string) bool {
	if len(s) != ulid.EncodedSize || s[0] > '7' {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') || c == 'I' || c == 'L' || c == 'O' || c == 'U' {
			return false
		}
	}
	return true
}
