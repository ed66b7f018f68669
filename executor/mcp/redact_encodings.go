package mcp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// encodings returns the forms of secret s a Redactor matches: s itself,
// hex, base64, percent-encodings and JSON string escapings.
func encodings(s string) []needle {
	out := []needle{{s: s}, {s: hex.EncodeToString([]byte(s))}, {s: strings.ToUpper(hex.EncodeToString([]byte(s)))}}
	out = append(out, base64Forms(s)...)
	for _, f := range percentForms(s) {
		out = append(out, needle{s: f})
	}
	for _, f := range jsonForms(s) {
		out = append(out, needle{s: f})
	}
	return out
}

// base64Forms are s's standard and URL-safe base64, unpadded (the padding
// is taken in with the match), and, for s inside longer encoded text, the
// encoding of the whole 3-byte groups of s at each of the three
// alignments, when it is at least minBase64Inner characters long.
func base64Forms(s string) []needle {
	var out []needle
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, needle{s: enc.EncodeToString([]byte(s)), base64: true})
		for start := range 3 {
			if start >= len(s) {
				break
			}
			groups := (len(s) - start) / 3
			inner := enc.EncodeToString([]byte(s[start : start+3*groups]))
			if len(inner) >= minBase64Inner {
				out = append(out, needle{s: inner, base64: true})
			}
		}
	}
	return out
}

// percentForms are s percent-encoded as common encoders do it: Go's
// QueryEscape and PathEscape, JavaScript's encodeURIComponent, RFC 3986
// (unreserved bytes kept), Python's quote (also keeping '/'), and every
// byte escaped; each with upper- and lower-case hex.
func percentForms(s string) []string {
	unreserved := func(c byte) bool {
		return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
	}
	forms := []string{
		url.QueryEscape(s),
		url.PathEscape(s),
		percent(s, func(c byte) bool { return unreserved(c) || strings.IndexByte("!'()*", c) >= 0 }),
		percent(s, unreserved),
		percent(s, func(c byte) bool { return unreserved(c) || c == '/' }),
		percent(s, func(byte) bool { return false }),
	}
	out := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		out = append(out, f, lowerEscapes(f))
	}
	return out
}

// percent escapes every byte of s that keep does not keep as %XX.
func percent(s string, keep func(byte) bool) string {
	var b strings.Builder
	for i := range len(s) {
		if c := s[i]; keep(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// lowerEscapes lower-cases the hex digits of every %XX in s.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// jsonForms are s as the inside of a JSON string: as encoding/json writes
// it, and escaped by hand without HTML escaping, ASCII-only (every
// non-ASCII character as \uXXXX, as Python writes it) and ASCII-only with
// '/' escaped (as PHP writes it).
func jsonForms(s string) []string {
	var out []string
	if b, err := json.Marshal(s); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	out = append(out, jsonEscape(s, false, false), jsonEscape(s, true, false), jsonEscape(s, true, true))
	return out
}

// jsonEscape escapes s for a JSON string: quote, backslash and control
// characters always; non-ASCII when ascii; '/' when slash.
func jsonEscape(s string, ascii, slash bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/' && slash:
			b.WriteString(`\/`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f && ascii:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r >= utf8.RuneSelf && ascii:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
