package builtin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/builtin"
)

const page = `<!doctype html><html><head><title>T</title><style>p{color:red}</style>
<script>alert("no")</script></head><body>
<h1>Stepgate</h1>
<p>Calls are <strong>checked</strong>, then <a href="/run">run</a>.</p>
<ul><li>one</li><li>two <code>x</code></li></ul>
<pre>a  b
c</pre>
</body></html>`

func TestWebfetch(t *testing.T) {
	tool, err := builtin.Webfetch()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "just text\n")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := strings.Repeat("x", 1<<20)
		for range 6 {
			fmt.Fprint(w, chunk)
			w.(http.Flusher).Flush() // no Content-Length: the cap is on what is read
		}
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n"))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/plain", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.invalid/x", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	tests := []struct {
		why     string
		in      builtin.WebfetchInput
		want    string
		isError bool
	}{
		{"HTML as Markdown by default", builtin.WebfetchInput{URL: srv.URL + "/page"},
			"# Stepgate\n\nCalls are **checked**, then [run](/run).\n\n- one\n- two `x`\n\n```\na  b\nc\n```", false},
		{"HTML as text", builtin.WebfetchInput{URL: srv.URL + "/page", Format: "text"},
			"Stepgate\n\nCalls are checked, then run.\n\n- one\n- two x\n\na  b\nc", false},
		{"HTML as is", builtin.WebfetchInput{URL: srv.URL + "/page", Format: "html"}, page, false},
		{"plain text", builtin.WebfetchInput{URL: srv.URL + "/plain"}, "just text\n", false},
		{"a redirect on the same host is followed", builtin.WebfetchInput{URL: srv.URL + "/moved"}, "just text\n", false},
		{"a redirect to another host is not", builtin.WebfetchInput{URL: srv.URL + "/away"},
			"fetch " + srv.URL + "/away: it redirects to another host, http://example.invalid/x; fetch that URL to follow it (it needs its own permission)", true},
		{"an error status", builtin.WebfetchInput{URL: srv.URL + "/missing"}, "fetch " + srv.URL + "/missing: 404 Not Found", true},
		{"over 5 MiB", builtin.WebfetchInput{URL: srv.URL + "/big"}, "fetch " + srv.URL + "/big: the body is over the 5 MiB limit", true},
		{"not text", builtin.WebfetchInput{URL: srv.URL + "/image"}, "fetch " + srv.URL + "/image: content type image/png is not text", true},
		{"a timeout", builtin.WebfetchInput{URL: srv.URL + "/slow", Timeout: 1}, "fetch " + srv.URL + "/slow: no answer within 1s", true},
	}
	for _, tt := range tests {
		p, err := prepare(t, tool, t.TempDir(), tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		if diff := cmp.Diff([]descriptor.Request{{Action: "webfetch", Resources: []string{tt.in.URL}, Save: []string{"*"}}}, p.Requests()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tt.why, diff)
		}
		res := p.Run(context.Background())
		if diff := cmp.Diff(tt.want, res.Text()); diff != "" || res.IsError != tt.isError {
			t.Errorf("%s (error %v) (-want +got):\n%s", tt.why, res.IsError, diff)
		}
	}
	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/x", "http://", "::"} {
		if _, err := prepare(t, tool, t.TempDir(), builtin.WebfetchInput{URL: u}); err == nil {
			t.Errorf("url %q was accepted", u)
		}
	}
}
