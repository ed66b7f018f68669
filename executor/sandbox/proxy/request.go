package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
)

// errHeaderTooLarge is readRequest's error for a header past the limit.
var errHeaderTooLarge = errors.New("request header too large")

// request is one request read from the client, with the Host header
// values as sent (http.ReadRequest drops them for absolute-form).
type request struct {
	*http.Request
	hosts []string
}

// readRequest reads one request from br, whose buffer size is the header
// limit: the line and header must fit in it (errHeaderTooLarge). It
// returns io.EOF when the client closed before sending a byte.
func readRequest(br *bufio.Reader) (request, error) {
	head, err := peekHeader(br)
	if err != nil {
		return request{}, err
	}
	hosts, err := hostHeaders(head)
	if err != nil {
		return request{}, fmt.Errorf("read request: %w", err)
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		return request{}, fmt.Errorf("read request: %w", err)
	}
	return request{Request: req, hosts: hosts}, nil
}

// peekHeader returns, without consuming it, the request's line and header
// up to and including the empty line that ends them.
func peekHeader(br *bufio.Reader) ([]byte, error) {
	n, scanned := 1, 0
	for {
		buf, err := br.Peek(n)
		if err != nil {
			switch {
			case errors.Is(err, bufio.ErrBufferFull):
				return nil, errHeaderTooLarge
			case errors.Is(err, io.EOF) && len(buf) == 0:
				return nil, io.EOF
			case errors.Is(err, io.EOF):
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		buf, _ = br.Peek(br.Buffered())
		if end := headerEnd(buf, scanned); end > 0 {
			return buf[:end], nil
		}
		scanned = max(0, len(buf)-2)
		if len(buf) >= br.Size() {
			return nil, errHeaderTooLarge
		}
		n = len(buf) + 1
	}
}

// headerEnd is the length of the head in buf (through the first empty
// line, CRLF or bare LF as textproto accepts), or 0 if incomplete; the
// search starts at from (what an earlier call has already scanned).
func headerEnd(buf []byte, from int) int {
	for i := from; i < len(buf); i++ {
		if buf[i] != '\n' {
			continue
		}
		rest := buf[i+1:]
		if bytes.HasPrefix(rest, []byte("\n")) {
			return i + 2
		}
		if bytes.HasPrefix(rest, []byte("\r\n")) {
			return i + 3
		}
	}
	return 0
}

// hostHeaders parses head with textproto (as http.ReadRequest does) and
// returns its Host header values.
func hostHeaders(head []byte) ([]string, error) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return nil, err
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	return h.Values("Host"), nil
}
