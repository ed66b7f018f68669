package refdoc_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/client/internal/refdoc"
)

// The endpoints' and error codes' pages are what the code gives: an
// endpoint, a type or a code changed without go generate ./client fails
// here.
func TestReferenceIsFresh(t *testing.T) {
	endpoints, err := refdoc.Endpoints()
	if err != nil {
		t.Fatal(err)
	}
	errs, err := refdoc.Errors("../../errors.go")
	if err != nil {
		t.Fatal(err)
	}
	for file, page := range map[string]string{"endpoints.md": endpoints, "errors.md": errs} {
		want, err := os.ReadFile("../../../docs/reference/" + file)
		if err != nil {
			t.Fatalf("%v: run go generate ./client", err)
		}
		if diff := cmp.Diff(string(want), page); diff != "" {
			t.Errorf("docs/reference/%s is stale: run go generate ./client (-file +generated):\n%s", file, diff)
		}
	}
}

// The hand-written service API page speaks of every endpoint and every
// code: one added to the code and not to the prose fails here.
func TestServiceAPIPageNamesEverything(t *testing.T) {
	page, err := os.ReadFile("../../../docs/reference/service-api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range client.Endpoints() {
		if !strings.Contains(string(page), "`"+client.Subject(e)+"`") {
			t.Errorf("docs/reference/service-api.md does not describe %s", client.Subject(e))
		}
	}
	errs, err := refdoc.Errors("../../errors.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(errs, "\n") {
		if code, ok := strings.CutPrefix(line, "| `"); ok && !strings.HasPrefix(code, "code") {
			code, _, _ = strings.Cut(code, "`")
			if !strings.Contains(string(page), "`"+code+"`") {
				t.Errorf("docs/reference/service-api.md does not explain the code %s", code)
			}
		}
	}
}
