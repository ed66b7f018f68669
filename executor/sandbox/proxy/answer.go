package proxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// refuse answers the client with r's status and reason (a short text the
// model reads), records the attempt as refused (or, for a failure after
// an allowed check, keeps the verdict and sets Error) and leaves the
// connection to be closed.
func (p *Proxy) refuse(c net.Conn, rec *Conn, r *refusal) {
	if rec.Verdict == "" {
		rec.Verdict = Refused
	}
	if rec.Verdict == Allowed {
		rec.Error = r.reason
	}
	rec.Code, rec.Reason, rec.Status = r.code, r.reason, r.status
	if r.ip != "" {
		rec.IP = r.ip
	}
	n, _ := writeAnswer(c, r.status, r.code, r.reason)
	rec.BytesDown += n
	p.cfg.Record(*rec)
}

// writeAnswer writes the proxy's own response: the status, the code in
// X-Stepgate-Proxy-Code, and "stepgate proxy: <reason>" as the body and
// in the reason phrase (clients that show only the status line still say
// why). The connection is to be closed after it.
func writeAnswer(w io.Writer, status int, code, reason string) (int64, error) {
	body := "stepgate proxy: " + reason + "\n"
	phrase := http.StatusText(status) + " (stepgate proxy: " + printable(reason, 200) + ")"
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %03d %s\r\n", status, phrase)
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("X-Stepgate-Proxy-Code: " + code + "\r\n")
	b.WriteString("Connection: close\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.WriteString(body)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// printable keeps the printable ASCII of s, at most n bytes, for a
// status line.
func printable(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < n; i++ {
		if c := s[i]; c >= ' ' && c <= '~' {
			b.WriteByte(c)
		}
	}
	return b.String()
}
