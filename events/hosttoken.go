package events

import "encoding/base64"

// HostToken is host's name as one token of a NATS subject (a host's own
// subjects: sgexec.<token>.<op>, stepgate.at.<token>.<endpoint>): the name
// itself when it is 1 to 128 letters, digits, '-' and '_', else "=" and the
// name in unpadded base64url (a name with a dot, a space or a wildcard would
// otherwise be several tokens, or a pattern). Distinct names get distinct
// tokens.
func HostToken(host string) string {
	if plainToken(host) {
		return host
	}
	return "=" + base64.RawURLEncoding.EncodeToString([]byte(host))
}

// plainToken reports whether s is a subject token as it stands.
func plainToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
