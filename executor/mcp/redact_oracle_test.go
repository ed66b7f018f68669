package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
)

// forms are the encodings of secret a test looks for, computed here and
// not by the redactor: the secret, hex, standalone base64, Go's
// percent-encodings and JSON's escaping.
func forms(secret string) map[string]string {
	js, _ := json.Marshal(secret)
	return map[string]string{
		"literal":      secret,
		"hex":          hex.EncodeToString([]byte(secret)),
		"HEX":          strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"base64":       base64.RawStdEncoding.EncodeToString([]byte(secret)),
		"base64url":    base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"query escape": url.QueryEscape(secret),
		"path escape":  url.PathEscape(secret),
		"json":         string(js[1 : len(js)-1]),
	}
}

// leaks names the forms of secret found in out, and "embedded base64"
// when some run of base64 in out, decoded at any alignment, holds the
// secret (of 8 bytes or more: shorter ones are matched only when they are
// encoded alone or at the end).
func leaks(out, secret string) []string {
	return leaksOf(out, secret, secret)
}

// leaksStrict is leaks, "embedded base64" reported already when a decoded
// run holds the secret less two bytes at each end (a secret of 8 bytes or
// more), for texts whose other bytes share nothing with the secret.
func leaksStrict(out, secret string) []string {
	if len(secret) < 8 {
		return leaks(out, secret)
	}
	return leaksOf(out, secret, secret[2:len(secret)-2])
}

func leaksOf(out, secret, mid string) []string {
	var found []string
	for name, f := range forms(secret) {
		if strings.Contains(out, f) {
			found = append(found, name)
		}
	}
	if len(secret) >= 8 && base64Holds(out, mid) { // shorter ones are found only encoded alone

		found = append(found, "embedded base64")
	}
	return found
}

// base64Holds reports whether a run of standard or URL-safe base64
// characters in out decodes, at one of the four character offsets, to
// bytes holding mid.
func base64Holds(out, mid string) bool {
	for _, alpha := range []struct {
		extra string
		enc   *base64.Encoding
	}{{"+/", base64.RawStdEncoding}, {"-_", base64.RawURLEncoding}} {
		runs := strings.FieldsFunc(out, func(r rune) bool {
			return !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune(alpha.extra, r))
		})
		for _, run := range runs {
			for off := range 4 {
				if off >= len(run) {
					break
				}
				s := run[off:]
				s = s[:len(s)/4*4]
				b, err := alpha.enc.DecodeString(s)
				if err == nil && bytes.Contains(b, []byte(mid)) {
					return true
				}
			}
		}
	}
	return false
}
