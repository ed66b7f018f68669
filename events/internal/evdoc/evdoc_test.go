package evdoc_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/events/internal/evdoc"
)

// The events page is the log's vocabulary as the code defines it: an event
// type or a field added without go generate ./events fails here.
func TestEventsPageIsFresh(t *testing.T) {
	page, err := evdoc.Page("../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../../docs/reference/events.md")
	if err != nil {
		t.Fatalf("%v: run go generate ./events", err)
	}
	if diff := cmp.Diff(string(want), page); diff != "" {
		t.Errorf("docs/reference/events.md is stale: run go generate ./events (-file +generated):\n%s", diff)
	}
}
