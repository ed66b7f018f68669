package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// Websearch limits.
const (
	WebsearchDefaultResults = 8
	WebsearchMaxResults     = 20
	websearchTimeout        = 30 * time.Second
	websearchMaxBody        = 1 << 20
)

// WebsearchInput is the input of websearch.
type WebsearchInput struct {
	Query      string `json:"query" jsonschema:"description=What to search the web for,minLength=1"`
	NumResults int    `json:"numResults,omitempty" jsonschema:"description=How many results (default 8; at most 20),minimum=0"`
}

// SearchResult is one hit the endpoint returned.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// The endpoint's protocol: POST {"query": q, "num_results": n} as JSON,
// answer {"results": [{"title", "url", "snippet"}]}.
type searchRequest struct {
	Query      string `json:"query"`
	NumResults int    `json:"num_results"`
}

type searchResponse struct {
	Results []SearchResult `json:"results"`
}

// Websearch builds websearch against endpoint (the configuration's
// websearch.endpoint); the tool exists only when an endpoint is configured.
// Permission: websearch on the query.
func Websearch(endpoint string) (*executor.Tool, error) {
	if _, err := fetchURL(endpoint); err != nil {
		return nil, fmt.Errorf("websearch.endpoint: %w", err)
	}
	return executor.New("websearch",
		"Search the web. Returns numbered results (title, URL, snippet), at most numResults (default 8, at most 20). Use webfetch to read a result.",
		func(ctx context.Context, _ executor.Call, in WebsearchInput) (string, error) {
			return search(ctx, endpoint, in)
		}, executor.WithEffect(descriptor.ReadOnly), executor.Anywhere(),
		executor.WithRequests(func(_ executor.Call, in WebsearchInput) ([]descriptor.Request, error) {
			if strings.TrimSpace(in.Query) == "" {
				return nil, fmt.Errorf("an empty query")
			}
			return []descriptor.Request{{Action: "websearch", Resources: []string{in.Query}, Save: []string{"*"}}}, nil
		}))
}

func search(ctx context.Context, endpoint string, in WebsearchInput) (string, error) {
	n := in.NumResults
	if n <= 0 {
		n = WebsearchDefaultResults
	}
	n = min(n, WebsearchMaxResults)
	body, _ := json.Marshal(searchRequest{Query: in.Query, NumResults: n}) // strings and ints: cannot fail
	ctx, cancel := context.WithTimeout(ctx, websearchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("search: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("search: the endpoint answered %s", resp.Status)
	}
	var out searchResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, websearchMaxBody)).Decode(&out); err != nil {
		return "", fmt.Errorf("search: the endpoint's answer is not {\"results\": [...]}: %w", err)
	}
	if len(out.Results) == 0 {
		return "No results found", nil
	}
	var b strings.Builder
	for i, r := range out.Results[:min(len(out.Results), n)] {
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, r.Title, r.URL)
		if r.Snippet != "" {
			fmt.Fprintf(&b, "   %s\n", r.Snippet)
		}
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
