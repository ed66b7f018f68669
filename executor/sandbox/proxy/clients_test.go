package proxy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
)

// relay listens on loopback TCP and pipes each connection to the unix
// socket sock, as the sandbox helper does inside the sandbox.
func relay(t *testing.T, sock string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				done := make(chan struct{})
				go func() { io.Copy(u, c); closeWrite(u); close(done) }()
				io.Copy(c, u)
				closeWrite(c)
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

func TestRealClientsThroughUnixSocketRelay(t *testing.T) {
	a := startUpstream(t, "A")
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello over tls path=%s", r.URL.Path)
	}))
	defer ts.Close()
	tlsPort := ts.Listener.Addr().(*net.TCPAddr).Port
	_, qport := quietListener(t)
	// httptest's certificate is for example.com.
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port), hp("example.com", tlsPort)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}, "example.com": {"127.0.0.1"}, "unlisted.test": {"127.0.0.1"}})
	proxyURL := "http://" + relay(t, h.sock)

	t.Run("go http.Client", func(t *testing.T) {
		tr := ts.Client().Transport.(*http.Transport).Clone()
		tr.Proxy = http.ProxyURL(must(url.Parse(proxyURL)))
		cl := &http.Client{Transport: tr}
		defer tr.CloseIdleConnections()
		get := func(u string) (int, string, error) {
			resp, err := cl.Get(u)
			if err != nil {
				return 0, "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), err
		}
		// http:// goes absolute-form; https:// goes through CONNECT.
		if code, body, err := get("http://" + hp("allowed.test", a.port) + "/go-abs"); err != nil || code != 200 || !strings.Contains(body, "path=/go-abs") {
			t.Errorf("http: %d %q %v", code, body, err)
		}
		if code, body, err := get("https://" + hp("example.com", tlsPort) + "/go-tls"); err != nil || code != 200 || !strings.Contains(body, "hello over tls path=/go-tls") {
			t.Errorf("https: %d %q %v", code, body, err)
		}
		if code, body, _ := get("http://" + hp("unlisted.test", qport) + "/"); code != 403 || !strings.Contains(body, "not on the allow-list") {
			t.Errorf("unlisted http: %d %q, want 403", code, body)
		}
		_, _, err := get("https://" + hp("unlisted.test", qport) + "/")
		if err == nil || !strings.Contains(err.Error(), "Forbidden") || !strings.Contains(err.Error(), "not on the allow-list") {
			t.Errorf("unlisted https: %v, want Forbidden with the reason", err)
		}
	})

	t.Run("curl", func(t *testing.T) {
		curl := func(args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), hang)
			defer cancel()
			cmd := exec.CommandContext(ctx, "curl", append([]string{"-sS", "--proxy", proxyURL, "--noproxy", ""}, args...)...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := curl("http://" + hp("allowed.test", a.port) + "/curl-abs"); err != nil || !strings.Contains(out, "path=/curl-abs") {
			t.Errorf("curl absolute-form: %q %v", out, err)
		}
		if out, err := curl("--proxytunnel", "http://"+hp("allowed.test", a.port)+"/curl-tunnel"); err != nil || !strings.Contains(out, "path=/curl-tunnel") {
			t.Errorf("curl CONNECT: %q %v", out, err)
		}
		if out, err := curl("--cacert", certFile(t, ts), "https://"+hp("example.com", tlsPort)+"/curl-tls"); err != nil || !strings.Contains(out, "hello over tls path=/curl-tls") {
			t.Errorf("curl https: %q %v", out, err)
		}
		if out, _ := curl("-i", "http://"+hp("unlisted.test", qport)+"/"); !strings.Contains(out, "403") || !strings.Contains(out, "not on the allow-list") {
			t.Errorf("curl unlisted absolute-form: %q, want 403 and the reason", out)
		}
		if out, err := curl("--proxytunnel", "http://"+hp("unlisted.test", qport)+"/"); err == nil || !strings.Contains(out, "403") {
			t.Errorf("curl unlisted CONNECT: %q %v, want a failure naming 403", out, err)
		}
	})
}

// certFile writes ts's certificate as PEM for curl.
func certFile(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	return writePEM(t, ts.TLS.Certificates[0])
}

// must returns v or panics (test set-up only).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
