package config

import (
	"fmt"
	"strings"
)

// SecretPrefix starts a secret reference: secret://NAME in a value stands
// for the secret NAME, resolved at the moment of use (see [Secrets]).
const SecretPrefix = "secret://"

// SecretRef is one secret://NAME reference inside a value: the bytes
// value[Start:End] are SecretPrefix followed by Name.
type SecretRef struct {
	Name       string
	Start, End int
}

// String is the reference as written, secret://NAME.
func (r SecretRef) String() string { return SecretPrefix + r.Name }

// SecretRefs finds the secret references in v, in order. A NAME is a
// letter or '_' followed by letters, digits and '_'; it ends at the first
// other byte, so "Bearer secret://TOKEN." refers to TOKEN. The prefix is
// matched case-sensitively. A prefix not followed by a name is an error:
// it would otherwise be sent as written.
func SecretRefs(v string) ([]SecretRef, error) {
	var refs []SecretRef
	for off := 0; ; {
		i := strings.Index(v[off:], SecretPrefix)
		if i < 0 {
			return refs, nil
		}
		start := off + i
		j := start + len(SecretPrefix)
		end := j
		for end < len(v) && nameByte(v[end], end == j) {
			end++
		}
		if end == j {
			return nil, fmt.Errorf("%s at byte %d is not followed by a name (a letter or _, then letters, digits or _)", SecretPrefix, start)
		}
		refs = append(refs, SecretRef{Name: v[j:end], Start: start, End: end})
		off = end
	}
}

// nameByte reports whether c may be a secret name's byte (its first when
// first).
func nameByte(c byte, first bool) bool {
	switch {
	case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		return true
	case '0' <= c && c <= '9':
		return !first
	}
	return false
}

// hasSecretRef reports whether v mentions the secret prefix at all.
func hasSecretRef(v string) bool { return strings.Contains(v, SecretPrefix) }
