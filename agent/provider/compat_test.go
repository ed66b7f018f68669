package provider_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
)

// An OpenAI-compatible server that answers an error in its own shape
// (FastAPI's {"detail": …}, a bare text) still gives the status, whether
// to retry and the body as the message.
func TestErrorInAServersOwnShape(t *testing.T) {
	cases := []struct {
		body   string
		status int
		retry  bool
		want   string
	}{
		{`{"detail":"model is loading"}`, http.StatusServiceUnavailable, true, "model is loading"},
		{`{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`, http.StatusBadRequest, false, "max_tokens is too large"},
		{`upstream busy`, http.StatusBadGateway, true, "upstream busy"},
		{``, http.StatusNotFound, false, "Not Found"},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(c.body))
		}))
		for _, name := range providers {
			p, err := provider.New(name, provider.Options{BaseURL: srv.URL, APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			e := fail(t, p, model.Conversation{Task: "t"}, false)
			if e.Status != c.status || e.Retryable != c.retry || !strings.Contains(e.Message, c.want) {
				t.Errorf("%s, body %q: error = %+v, want status %d retryable %v message %q", name, c.body, e, c.status, c.retry, c.want)
			}
		}
		srv.Close()
	}
}
