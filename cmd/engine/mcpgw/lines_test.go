package mcpgw

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// nopCloser is a buffer the filter may close.
type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// filterAll runs input through a line filter of max bytes a line: what it
// passes on, and what it answered.
func filterAll(t testing.TB, input io.Reader, max int) (passed, answered []string) {
	var out bytes.Buffer
	f := newLineFilter(input, &lockedWriter{w: nopCloser{&out}}, max, slog.New(slog.DiscardHandler))
	b, err := io.ReadAll(iotestOneByte(f))
	if err != nil {
		t.Fatalf("read the filter: %v", err)
	}
	return lines(string(b)), lines(out.String())
}

// iotestOneByte reads r in small, uneven pieces, as a decoder might.
func iotestOneByte(r io.Reader) io.Reader { return &smallReads{r: r} }

type smallReads struct {
	r io.Reader
	n int
}

func (s *smallReads) Read(p []byte) (int, error) {
	s.n++
	return s.r.Read(p[:min(len(p), 1+s.n%7)])
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// errorCode is the code of a JSON-RPC error answer, with its id.
func errorCode(t testing.TB, line string) (int64, json.RawMessage, string) {
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil {
		t.Fatalf("answer %q is not a JSON-RPC error: %v", line, err)
	}
	return r.Error.Code, r.ID, r.Error.Message
}

// Only one JSON-RPC message a line gets through, trimmed; a line that is
// not JSON is -32700, one that is JSON but not a message (or a batch) is
// -32600, both with id null; blank lines are skipped; the last line needs
// no newline.
func TestLineFilter(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	input := strings.Join([]string{
		ping,
		"not json at all",
		"   ",
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + " \t\r",
		`[` + ping + `]`,
		`{}`,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"a":1} {"b":2}`,
		`42`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}, "\n")
	passed, answered := filterAll(t, strings.NewReader(input), 1024)
	want := []string{ping, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	if strings.Join(passed, "\n") != strings.Join(want, "\n") {
		t.Errorf("passed on:\n%s\nwant:\n%s", strings.Join(passed, "\n"), strings.Join(want, "\n"))
	}
	codes := []int64{jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidRequest, jsonrpc.CodeInvalidRequest,
		jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest}
	if len(answered) != len(codes) {
		t.Fatalf("answered %d lines, want %d: %q", len(answered), len(codes), answered)
	}
	for i, a := range answered {
		code, id, _ := errorCode(t, a)
		if code != codes[i] || string(id) != "null" {
			t.Errorf("answer %d: code %d id %s, want %d and null", i, code, id, codes[i])
		}
	}
}

// repeatReader is n bytes of b, then its tail: a line made on the fly.
type repeatReader struct {
	b    byte
	n    int
	tail string
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		if r.tail == "" {
			return 0, io.EOF
		}
		n := copy(p, r.tail)
		r.tail = r.tail[n:]
		return n, nil
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// A 40 MB line is answered -32700 naming the bound and skipped, and the
// next line gets through; the filter never holds the line whole: under a
// bound of 1 MiB, reading it allocates a fraction of its size.
func TestLineFilterLongLine(t *testing.T) {
	const size = 40 << 20
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	in := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":6,"method":"x","params":{"s":"`),
		&repeatReader{b: 'a', n: size, tail: "\"}}\n" + ping + "\n"})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out bytes.Buffer
	f := newLineFilter(in, &lockedWriter{w: nopCloser{&out}}, 1<<20, slog.New(slog.DiscardHandler))
	b, err := io.ReadAll(f)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(b)) != ping {
		t.Errorf("passed on %.200q, want only the ping after the long line", b)
	}
	code, _, msg := errorCode(t, strings.TrimSpace(out.String()))
	if code != jsonrpc.CodeParseError || !strings.Contains(msg, "longer than 1048576 bytes") {
		t.Errorf("the long line's answer: %d %q, want -32700 naming the bound", code, msg)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc >= size/4 {
		t.Errorf("reading a %d-byte line allocated %d bytes: it was held whole", size, alloc)
	}
}

// readLineRef is readLine's reference: the input split at newlines.
func readLineRef(data []byte, max int) (out []string) {
	parts := bytes.Split(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	for _, p := range parts {
		if len(p) > max {
			out = append(out, "\x00too long")
		} else {
			out = append(out, string(p))
		}
	}
	return out
}

// FuzzReadLine: readLine splits any input at its newlines as bytes.Split
// does, marks exactly the lines over the bound, and never keeps more than
// the bound of one.
func FuzzReadLine(f *testing.F) {
	for _, s := range []string{"", "\n", "a\nbb\nccc", "abcdefghijklmnopqrstuvwxyz\nshort\n", "x\r\n\n\ny", strings.Repeat("z", 40) + "\n" + strings.Repeat("y", 17)} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, data []byte, m uint8) {
		max := int(m%40) + 1
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var got []string
		var buf []byte
		for {
			line, tooLong, err := readLine(r, buf, max)
			if len(line) > max {
				t.Fatalf("a line of %d bytes kept, bound %d", len(line), max)
			}
			if tooLong {
				got = append(got, "\x00too long")
			} else if err == nil || len(line) > 0 {
				got = append(got, string(line))
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				break
			}
			buf = line
		}
		if want := readLineRef(data, max); strings.Join(got, "|\n|") != strings.Join(want, "|\n|") {
			t.Fatalf("readLine(%q, %d) = %q, want %q", data, max, got, want)
		}
	})
}

// FuzzLineFilter: whatever the input, every line the filter passes on is
// one JSON-RPC message the go-sdk reads (so the session cannot end on
// it), every answer is a JSON-RPC error, and every non-blank line is one
// or the other.
func FuzzLineFilter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"garbage\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		"{}\n[]\nnull\n\"x\"\n",
		`{"jsonrpc":"2.0","id":1.5e400,"method":"p"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"p\"}",
		strings.Repeat("{", 80),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		passed, answered := filterAll(t, bytes.NewReader(data), 64)
		for _, p := range passed {
			if len(p) > 64 || p != strings.TrimSpace(p) || strings.HasPrefix(p, "[") {
				t.Fatalf("passed on %q", p)
			}
			if _, err := jsonrpc.DecodeMessage([]byte(p)); err != nil {
				t.Fatalf("passed on %q, which the go-sdk cannot read: %v", p, err)
			}
		}
		for _, a := range answered {
			errorCode(t, a)
		}
		nonBlank := 0
		for _, l := range readLineRef(data, len(data)+1) {
			if len(bytes.TrimSpace([]byte(l))) > 0 {
				nonBlank++
			}
		}
		if len(passed)+len(answered) != nonBlank {
			t.Fatalf("%d non-blank lines, %d passed on and %d answered", nonBlank, len(passed), len(answered))
		}
	})
}
