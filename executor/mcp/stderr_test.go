package mcp

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"
)

// logLines runs the stream through a stderrLog of secret's redactor,
// written in chunks of chunk bytes, and returns the logged lines.
func logLines(t *testing.T, secret, stream string, chunk int) []string {
	t.Helper()
	var logged bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := newStderrLog(log, "s", NewRedactor([]string{secret}))
	for p := []byte(stream); len(p) > 0; {
		n := min(chunk, len(p))
		_, _ = w.Write(p[:n])
		p = p[n:]
	}
	var lines []string
	for _, rec := range strings.Split(strings.TrimSpace(logged.String()), "\n") {
		if rec == "" {
			continue
		}
		var v struct{ Line *string }
		if err := jsonUnmarshal(rec, &v); err != nil {
			t.Fatal(err)
		}
		if v.Line != nil {
			lines = append(lines, *v.Line)
		}
	}
	return lines
}

func TestStderrRedactsSecretsInFragments(t *testing.T) {
	s := testSecret
	cut := strings.Repeat("y", maxStderrLine-7)
	b64 := base64.StdEncoding.EncodeToString([]byte("kTOKEN=" + s + "\n"))
	for _, c := range []struct{ name, stream string }{
		{"whole", "TOKEN=" + s + "\n"},
		{"split over two lines", "TOKEN=" + s[:9] + "\n" + s[9:] + " ok\n"},
		{"one byte a line", strings.Join(strings.Split(s, ""), "\n") + "\n"},
		{"cut at the line limit", cut + s + " and more\n"},
		{"cut, the rest never printed", cut + s[:12] + "\n"},
		{"a truncated line", "TOKEN=" + s[:len(s)-1] + "\nnext\n"},
		{"a long line's end into the next", strings.Repeat("z", 3000) + s[:10] + "\n" + s[10:] + "\n"},
		{"base64", "env " + b64 + "\n"},
		{"base64 wrapped at 16", strings.Join(chunks(b64, 16), "\n") + "\n"},
		{"hex", "0x" + strings.ToUpper(hexOf(s)) + "\n"},
		{"crlf", "TOKEN=" + s[:9] + "\r\n" + s[9:] + "\r\n"},
	} {
		for _, chunk := range []int{1, 7, 4096} {
			lines := logLines(t, s, c.stream, chunk)
			joined := strings.Join(lines, "")
			if l := leaks(joined, s); len(l) > 0 {
				t.Errorf("%s (writes of %d): %v in the log: %q", c.name, chunk, l, lines)
			}
			for _, line := range lines {
				if len(line) > maxStderrLine {
					t.Errorf("%s: a line of %d bytes logged", c.name, len(line))
				}
				for k := minFragment; k <= len(s); k++ {
					if strings.HasSuffix(line, s[:k]) || strings.HasPrefix(line, s[len(s)-k:]) {
						t.Errorf("%s (writes of %d): %d bytes of the secret at an edge of %q", c.name, chunk, k, line)
					}
				}
			}
		}
	}
	if got := logLines(t, s, "plain line\n"+cut+"yyyyyyyyyyyy\n", 5); len(got) != 2 || got[0] != "plain line" || got[1] != strings.Repeat("y", maxStderrLine) {
		t.Fatalf("lines without the secret: %q", got)
	}
	// What is not the secret stays, beside it and after it.
	got := logLines(t, s, "TOKEN="+s[:9]+"\n"+s[9:]+" ok\n"+"token "+s[:len(s)-1]+"\nenviron (base64) c2c\n", 3)
	want := []string{"TOKEN=[redacted]", "[redacted] ok", "token [redacted]", "environ (base64) c2c"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("logged %q, want %q", got, want)
	}
}

func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
