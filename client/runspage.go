package client

import "context"

// RunsRequest asks for a page of the runs the answering host knows, oldest
// first (runs): an empty request is the first page of DefaultRunsLimit.
type RunsRequest struct {
	// Limit is the most runs of the page: default DefaultRunsLimit (100),
	// at most MaxRunsLimit (1000); more is invalid_request.
	Limit int `json:"limit,omitempty"`
	// Cursor is a previous page's Next: this page lists the runs after it.
	Cursor string `json:"cursor,omitempty"`
}

// Page sizes of runs.
const (
	DefaultRunsLimit = 100
	MaxRunsLimit     = 1000
)

// RunPage is one page of runs, oldest first.
type RunPage struct {
	Runs []RunSummary `json:"runs"`
	// Next is the cursor of the next page; empty when this was the last.
	Next string `json:"next"`
}

// RunsPage returns a page of the runs the answering host knows.
func (c *Client) RunsPage(ctx context.Context, req RunsRequest) (*RunPage, error) {
	return callAs[RunPage](ctx, c, EndpointRuns, req)
}

// Runs lists every run the answering host knows, oldest first, a page of
// MaxRunsLimit at a time (each page one request, bounded in size; a host
// may answer the pages from different points of the log, so a run started
// meanwhile may or may not be listed).
func (c *Client) Runs(ctx context.Context) ([]RunSummary, error) {
	var out []RunSummary
	for req := (RunsRequest{Limit: MaxRunsLimit}); ; {
		page, err := c.RunsPage(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Runs...)
		if page.Next == "" {
			return out, nil
		}
		req.Cursor = page.Next
	}
}
