package client_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/client/internal/schemagen"
)

// The checked-in schemas are what the types give: a change of a wire type
// without `go generate` fails here.
func TestSchemasAreGeneratedFromTheTypes(t *testing.T) {
	want, err := schemagen.Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join("schema", name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./client/)", name, err)
			continue
		}
		if string(got) != string(b) {
			t.Errorf("schema/%s differs from what the types give: run go generate ./client/", name)
		}
	}
	files, err := filepath.Glob(filepath.Join("schema", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("%s is no endpoint's schema: remove it", f)
		}
	}
	if len(want) != 2*len(client.Endpoints()) {
		t.Errorf("%d schema files for %d endpoints, want two each", len(want), len(client.Endpoints()))
	}
}

// Every endpoint's schemas are valid JSON objects naming the draft, and a
// schema of an endpoint the service does not have is an error.
func TestSchemaOfEveryEndpoint(t *testing.T) {
	names := client.Endpoints()
	slices.Sort(names)
	for _, name := range names {
		req, resp, err := client.Schema(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, b := range [][]byte{req, resp} {
			var s struct {
				Schema string `json:"$schema"`
			}
			if err := json.Unmarshal(b, &s); err != nil || s.Schema == "" {
				t.Errorf("%s: schema %.60s…: %v, want a JSON Schema document", name, b, err)
			}
		}
	}
	if _, _, err := client.Schema("no_such_endpoint"); err == nil {
		t.Error("a schema of an endpoint the service does not have, want an error")
	}
}
