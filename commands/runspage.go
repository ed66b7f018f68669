package commands

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/client"
)

// Runs a page at a time.
type (
	RunsRequest = client.RunsRequest
	RunPage     = client.RunPage
)

// Page sizes of RunsPage.
const (
	DefaultRunsLimit = client.DefaultRunsLimit
	MaxRunsLimit     = client.MaxRunsLimit
)

// RunsPage returns a page of the runs this host's projection knows, oldest
// first: it reads the page's runs, not every run (a host of a hundred
// thousand runs answers a page as fast as one of ten).
func (e *Engine) RunsPage(ctx context.Context, req RunsRequest) (*RunPage, error) {
	return e.runs.RunsPage(ctx, req)
}

// RunsPage implements [client.API].
func (w Wire) RunsPage(ctx context.Context, req RunsRequest) (*RunPage, error) {
	out, err := w.Host.RunsPage(ctx, req)
	return out, Translate(err)
}

// RunsPage answers [Engine.RunsPage].
func (h *runs) RunsPage(ctx context.Context, req RunsRequest) (*RunPage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := req.Limit
	switch {
	case limit == 0:
		limit = DefaultRunsLimit
	case limit < 0 || limit > MaxRunsLimit:
		return nil, fmt.Errorf("runs: limit %d: want 1 to %d: %w", req.Limit, MaxRunsLimit, ErrInvalidRequest)
	}
	after := ""
	if req.Cursor != "" {
		c, err := decodeRunsCursor(req.Cursor)
		if err != nil {
			return nil, err
		}
		after = c.After
	}
	if err := h.syncAll(ctx); err != nil {
		return nil, err
	}
	runs, more, err := h.proj.RunsPage(after, limit)
	if err != nil {
		return nil, err
	}
	page := &RunPage{Runs: make([]client.RunSummary, len(runs))}
	for i, s := range runs {
		page.Runs[i] = WireSummary(s)
	}
	if more {
		page.Next = runsCursor{After: runs[len(runs)-1].ID}.encode()
	}
	return page, nil
}

// runsCursor is where a page of runs ended. It travels as an opaque string
// (base64 of JSON), as the tickets' cursor does; a client must not build
// one.
type runsCursor struct {
	V     int    `json:"v"`
	After string `json:"after"`
}

// encode returns the cursor's opaque form.
func (c runsCursor) encode() string {
	c.V = 1
	return encodeCursor(c)
}

// decodeRunsCursor reads a cursor that a previous page of runs returned.
// Anything else is an error wrapping ErrInvalidRequest.
func decodeRunsCursor(s string) (runsCursor, error) {
	var c runsCursor
	if err := readCursor(s, &c); err != nil {
		return runsCursor{}, err
	}
	if c.V != 1 || !cursorID(c.After) {
		return runsCursor{}, fmt.Errorf("cursor: not one this engine gave: %w", ErrInvalidRequest)
	}
	return c, nil
}
