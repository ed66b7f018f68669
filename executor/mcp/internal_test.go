package mcp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStderrIsBoundedAndScrubbed(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := newStderrLog(log, "s", NewRedactor([]string{"tok-secret-99"}))
	_, _ = w.Write([]byte("starting with tok-secret-99\n" + strings.Repeat("y", 5000) + "\npartial "))
	_, _ = w.Write([]byte("line\n"))
	for range maxStderrLines + 50 {
		_, _ = w.Write([]byte("noise\n"))
	}
	out := logged.String()
	if strings.Contains(out, "tok-secret-99") || !strings.Contains(out, "starting with [redacted]") {
		t.Fatalf("not scrubbed:\n%.300s", out)
	}
	if strings.Contains(out, strings.Repeat("y", maxStderrLine+1)) || !strings.Contains(out, strings.Repeat("y", maxStderrLine)) {
		t.Fatal("a long line was not cut at the bound")
	}
	if !strings.Contains(out, "partial line") {
		t.Fatal("a line written in two pieces was not joined")
	}
	if n := strings.Count(out, "mcp: server stderr\""); n > maxStderrLines {
		t.Fatalf("%d lines logged", n)
	}
	if !strings.Contains(out, "further lines are not logged") {
		t.Fatal("the cut-off is not said")
	}
}

func TestBackoffIsJitteredAndBounded(t *testing.T) {
	c, err := NewClient("b", Options{Resolve: func(context.Context) (Server, error) { return Server{}, nil },
		MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := range 40 {
		want := min(100*time.Millisecond<<min(attempt, 20), time.Second)
		var seen []time.Duration
		for range 20 {
			d := c.backoff(attempt)
			if d < want/2 || d > want {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, want/2, want)
			}
			seen = append(seen, d)
		}
		if slices.Min(seen) == slices.Max(seen) {
			t.Fatalf("attempt %d: no jitter in %v", attempt, seen)
		}
	}
}

func TestEnvironIsExactlyTheConfiguredOnesWithPathAndHome(t *testing.T) {
	t.Setenv("PATH", "/bin")
	t.Setenv("HOME", "/home/u")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	got := environ(map[string]string{"A": "1", "HOME": "/srv"})
	want := []string{"PATH=/bin", "A=1", "HOME=/srv"}
	if !slices.Equal(got, want) {
		t.Fatalf("environ %q, want %q", got, want)
	}
}

func TestHeadersOnEveryRequest(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Extra"))
	}))
	defer srv.Close()
	rt := &headerTransport{base: http.DefaultTransport, headers: map[string]string{"Authorization": "Bearer t", "X-Extra": "e"}}
	cl := &http.Client{Transport: rt}
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get("Authorization") != "" {
			t.Fatal("the caller's request was modified")
		}
	}
	if !slices.Equal(got, []string{"Bearer t|e", "Bearer t|e"}) {
		t.Fatalf("headers seen %q", got)
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}
