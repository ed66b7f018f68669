package mcp

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// encode puts secret into text the way kind says: as is, hex, base64 of
// before+secret+after (so at before's alignment), percent- or
// JSON-encoded, or not at all.
func encode(kind uint8, before, secret, after string) string {
	switch kind % 8 {
	case 0:
		return before + secret + after
	case 1:
		return before + hex.EncodeToString([]byte(secret)) + after
	case 2:
		return base64.StdEncoding.EncodeToString([]byte(before + secret + after))
	case 3:
		return "x" + base64.URLEncoding.EncodeToString([]byte(before+secret+after)) + "y"
	case 4:
		return before + url.QueryEscape(secret) + after
	case 5:
		b, _ := json.Marshal(before + secret + after)
		return string(b)
	case 6:
		return before + strings.ToUpper(hex.EncodeToString([]byte(secret))) + after
	}
	return before + after
}

// FuzzRedact: after Redact, no form of the secret remains (the oracle's
// forms, and embedded base64 at any alignment); text in which the
// redactor matches nothing comes back unchanged; Redact is idempotent.
func FuzzRedact(f *testing.F) {
	f.Add("sg-secret-0123456789", "TOKEN=", "\nPATH=/bin", uint8(0))
	f.Add("sg-secret-0123456789", "k", " end", uint8(2))
	f.Add("p@ss w/rd&more", "q=", "", uint8(4))
	f.Add("x]y[redacted]z", "x]y", "z", uint8(0))
	f.Add("dact", "[re", "ed]", uint8(0))
	f.Fuzz(func(t *testing.T, secret, before, after string, kind uint8) {
		if len(secret) < minSecret {
			return
		}
		r := NewRedactor([]string{secret})
		text := encode(kind, before, secret, after)
		got := r.Redact(text)
		if l := leaks(got, secret); len(l) > 0 && kind%8 != 7 {
			t.Fatalf("%v of %q remain in %q (from %q)", l, secret, got, text)
		}
		if len(matches(got, r.needles)) > 0 {
			t.Fatalf("a match remains in %q", got)
		}
		if again := r.Redact(got); again != got {
			t.Fatalf("not idempotent: %q → %q", got, again)
		}
		if len(matches(text, r.needles)) == 0 && got != text {
			t.Fatalf("text without the secret changed: %q → %q", text, got)
		}
		if js := r.RedactJSON(json.RawMessage(text)); json.Valid([]byte(text)) && !json.Valid(js) {
			t.Fatalf("valid JSON %q redacted to invalid %q", text, js)
		}
	})
}

// FuzzStderrLog: a secret (or an encoding) printed with line breaks
// anywhere, in writes of any size, leaves no form of it in any logged
// line, nor in the logged lines joined when no line is cut.
func FuzzStderrLog(f *testing.F) {
	f.Add("sg-secret-0123456789", "TOKEN=", "\n", []byte{3, 9}, uint8(0), uint8(5))
	f.Add("sg-secret-0123456789", strings.Repeat("y", 1020), "\n", []byte{}, uint8(0), uint8(64))
	f.Add("sg-secret-0123456789", "kk", "\n", []byte{16, 32}, uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, secret, before, after string, breaks []byte, kind, chunk uint8) {
		if len(secret) < minSecret || strings.ContainsAny(secret, "\r\n") {
			return
		}
		stream := encode(kind, before, secret, after)
		for _, b := range breaks {
			i := int(b) % (len(stream) + 1)
			stream = stream[:i] + "\n" + stream[i:]
		}
		stream += "\n"
		lines := logLines(t, secret, stream, int(chunk)+1)
		cut := false
		for _, l := range strings.Split(stream, "\n") {
			cut = cut || len(strings.TrimSuffix(l, "\r")) > maxStderrLine-2*len("[redacted]")
		}
		for _, line := range lines {
			if l := leaks(line, secret); len(l) > 0 {
				t.Fatalf("%v in the logged line %q", l, line)
			}
		}
		if joined := strings.Join(lines, ""); !cut && strings.Contains(joined, secret) {
			t.Fatalf("the secret in the log: %q", lines)
		}
		// A stream the rule does not touch is logged as it was printed.
		in := strings.Split(strings.TrimSuffix(stream, "\n"), "\n")
		if cut || strings.Contains(stream, "\r") || len(in) > maxStderrLines || touched(NewRedactor([]string{secret}), in) {
			return
		}
		if strings.Join(lines, "\n") != strings.Join(in, "\n") {
			t.Fatalf("untouched lines %q logged as %q", in, lines)
		}
	})
}

// touched reports, by brute force, whether the stderr rule applies to
// lines: a stream needle in the lines joined, or a fragment of at least
// minFragment bytes of one at an edge of a line.
func touched(r *Redactor, lines []string) bool {
	joined := strings.Join(lines, "")
	for _, n := range r.stream {
		if strings.Contains(joined, n.s) {
			return true
		}
		for k := minFragment; k <= len(n.s); k++ {
			for i, line := range lines {
				before := strings.Join(lines[:i+1], "")
				if strings.HasSuffix(before, n.s[:k]) && len(line) > 0 || strings.HasPrefix(line, n.s[len(n.s)-k:]) {
					return true
				}
			}
		}
	}
	return false
}
