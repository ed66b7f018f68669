package mcpgw

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxStdioLine is the longest line ServeStdio reads (the go-sdk's own
// bound on a frame): a longer line is answered with a parse error and
// skipped, read in pieces and never held whole.
const MaxStdioLine = 16 << 20

// lineChunk is how much of a line is read at once.
const lineChunk = 64 << 10

// readLine reads one line of r (up to '\n', which it drops) into buf[:0],
// keeping at most max bytes: the rest of a longer line is read and
// dropped, and tooLong is set. err is r's error (io.EOF at the end; line
// then holds the last, unterminated line, if any).
func readLine(r *bufio.Reader, buf []byte, max int) (line []byte, tooLong bool, err error) {
	line = buf[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong && len(line)+len(chunk) <= max {
			line = append(line, chunk...)
		} else {
			tooLong, line = true, line[:0]
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// judge is what a line of the stdio transport is: 0 when it is one
// JSON-RPC message as the go-sdk reads it (so reading it cannot end the
// session), or the JSON-RPC error code it is answered with and why.
// Batches (JSON arrays) are refused: the go-sdk ends the session on a
// batch under protocol 2025-06-18 and later, and no client sends them.
func judge(line []byte) (code int64, why string) {
	switch {
	case !json.Valid(line):
		return jsonrpc.CodeParseError, "Parse error: the line is not one JSON value"
	case line[0] == '[':
		return jsonrpc.CodeInvalidRequest, "Invalid Request: batches are not accepted; send one message a line"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return jsonrpc.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message: " + err.Error()
	}
	return 0, ""
}

// lineFilter is the stdio transport's reader: it reads its input a
// bounded line at a time and passes on only the lines that are one
// JSON-RPC message (trimmed, one a line). Every other line is answered on
// out, with id null, and skipped: the go-sdk ends a session on the first
// frame it cannot read, so it never sees one.
type lineFilter struct {
	in      *bufio.Reader
	out     *lockedWriter
	max     int
	log     *slog.Logger
	buf     []byte // the line being read, reused
	pending []byte // the part of the current line not yet read from the filter
	err     error  // the input's error, returned once pending is read
}

func newLineFilter(in io.Reader, out *lockedWriter, max int, log *slog.Logger) *lineFilter {
	return &lineFilter{in: bufio.NewReaderSize(in, min(lineChunk, max+1)), out: out, max: max, log: log}
}

// Read implements io.Reader.
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		if cap(f.buf) > 4*lineChunk {
			f.buf = nil // a long line's buffer is not kept
		}
		line, tooLong, err := readLine(f.in, f.buf, f.max)
		f.buf, f.err = line, err
		msg := bytes.TrimSpace(line)
		switch {
		case tooLong:
			f.refuse(jsonrpc.CodeParseError, fmt.Sprintf("Parse error: the line is longer than %d bytes, the most a message may be", f.max))
		case len(msg) == 0:
		default:
			if code, why := judge(msg); code != 0 {
				f.refuse(code, why)
			} else {
				f.pending = append(msg, '\n') // msg ends inside line's buffer or at its end
			}
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// refuse answers a line that is not read with a JSON-RPC error.
func (f *lineFilter) refuse(code int64, why string) {
	f.log.Warn("MCP over stdio: a line refused", "code", code, "why", why)
	b, _ := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", nil, jsonrpc.Error{Code: code, Message: why}})
	if _, err := f.out.Write(append(b, '\n')); err != nil {
		f.log.Warn("MCP over stdio: answer a refused line", "err", err)
	}
}

// lockedWriter is the stdio transport's output: the go-sdk writes each
// message with one Write, and so does the line filter, one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lockedWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Close()
}
