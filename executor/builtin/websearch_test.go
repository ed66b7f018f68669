package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// A local endpoint speaking websearch's protocol: it answers up to
// num_results hits for any query but "down".
func searchEndpoint(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query      string `json:"query"`
			NumResults int    `json:"num_results"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.Query == "down" {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		var res []builtin.SearchResult
		for i := range req.NumResults {
			res = append(res, builtin.SearchResult{Title: fmt.Sprintf("%s %d", req.Query, i+1), URL: fmt.Sprintf("https://example.test/%d", i+1), Snippet: "about " + req.Query})
		}
		json.NewEncoder(w).Encode(map[string]any{"results": res})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/search"
}

func TestWebsearch(t *testing.T) {
	tool, err := builtin.Websearch(searchEndpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      builtin.WebsearchInput
		want    string
		isError bool
	}{
		{builtin.WebsearchInput{Query: "nats", NumResults: 2},
			"1. nats 1\n   https://example.test/1\n   about nats\n2. nats 2\n   https://example.test/2\n   about nats", false},
		{builtin.WebsearchInput{Query: "x", NumResults: 500}, "", false}, // capped at 20: checked below
		{builtin.WebsearchInput{Query: "down"}, "search: the endpoint answered 503 Service Unavailable", true},
	}
	for _, tt := range tests {
		p, err := prepare(t, tool, t.TempDir(), tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]descriptor.Request{{Action: "websearch", Resources: []string{tt.in.Query}, Save: []string{"*"}}}, p.Requests()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		res := p.Run(context.Background())
		if tt.in.NumResults == 500 {
			if got := res.Text(); !containsLine(got, "20. x 20") || containsLine(got, "21. x 21") {
				t.Errorf("500 results asked: got %q, want 20", got)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, res.Text()); diff != "" || res.IsError != tt.isError {
			t.Errorf("%q (error %v) (-want +got):\n%s", tt.in.Query, res.IsError, diff)
		}
	}
	if _, err := prepare(t, tool, t.TempDir(), builtin.WebsearchInput{Query: " "}); err == nil {
		t.Error("an empty query was accepted")
	}
	if _, err := builtin.Websearch("file:///search"); err == nil {
		t.Error("a file: endpoint was accepted")
	}
}

func containsLine(text, line string) bool {
	for l := range strings.Lines(text) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}
