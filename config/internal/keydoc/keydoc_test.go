package keydoc_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/config/internal/keydoc"
)

// The keys page is what the decoder reads: a key added, renamed or
// described anew without go generate ./config fails here.
func TestConfigKeysPageIsFresh(t *testing.T) {
	page, err := keydoc.Page("../..")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../../docs/reference/config-keys.md")
	if err != nil {
		t.Fatalf("%v: run go generate ./config", err)
	}
	if diff := cmp.Diff(string(want), page); diff != "" {
		t.Errorf("docs/reference/config-keys.md is stale: run go generate ./config (-file +generated):\n%s", diff)
	}
}
