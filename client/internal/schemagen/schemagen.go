// Package schemagen reflects the JSON Schema of every endpoint's request
// and response of the Stepgate service from package client's types: go
// generate in package client writes them (./gen), and client's test
// compares the checked-in files with them.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/invopop/jsonschema"
	"github.com/stepgate/stepgate/client"
)

// Write writes every schema file into dir.
func Write(dir string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Files is every schema file by its name: indented JSON, one per request
// and per response of each endpoint. The same types always give the same
// bytes.
func Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	names := client.Endpoints()
	slices.Sort(names)
	for _, name := range names {
		req, resp, _ := client.EndpointTypes(name)
		for i, v := range []any{req, resp} {
			b, err := schemaOf(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out[client.SchemaFile(name, i == 1)] = b
		}
	}
	return out, nil
}

// schemaOf reflects v's type: definitions under $defs, no $id (a schema is
// named by its endpoint, not by a Go package), objects closed to fields
// they do not have (the service refuses those in a request).
func schemaOf(v any) ([]byte, error) {
	r := jsonschema.Reflector{Anonymous: true}
	b, err := json.Marshal(r.Reflect(v))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
