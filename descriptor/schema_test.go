package descriptor_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
)

func TestSchemaValidate(t *testing.T) {
	s, err := descriptor.Compile(json.RawMessage(`{
		"type": "object",
		"additionalProperties": false,
		"required": ["text"],
		"properties": {
			"text": {"type": "string"},
			"n": {"type": "integer", "minimum": 1},
			"tags": {"type": "array", "items": {"type": "string"}},
			"mode": {"enum": ["a", "b"]}
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		why  string
		doc  string
		want string // "" means valid
	}{
		{why: "valid", doc: `{"text":"hi","n":2}`},
		{why: "missing required property", doc: `{}`, want: "missing property 'text'"},
		{why: "one unknown property reads in the singular", doc: `{"text":"a","x":1}`, want: "additional property 'x' not allowed"},
		{why: "several unknown properties", doc: `{"text":"a","x":1,"y":2}`, want: "additional properties 'x', 'y' not allowed"},
		{why: "wrong type names the location", doc: `{"text":3}`, want: "at '/text': got number, want string"},
		{why: "nested location", doc: `{"text":"a","tags":["a",7]}`, want: "at '/tags/1': got number, want string"},
		{why: "big integers keep their precision", doc: `{"text":"a","n":0}`, want: "at '/n': minimum: got 0, want 1"},
		{why: "not an object at all", doc: `null`, want: "got null, want object"},
		{why: "several problems are sorted and joined on one line", doc: `{"n":"x","x":1}`,
			want: "additional property 'x' not allowed; at '/n': got string, want integer; missing property 'text'"},
		{why: "more than three problems are counted", doc: `{"n":"x","x":1,"tags":[1],"mode":"c"}`,
			want: "additional property 'x' not allowed; at '/mode': value must be one of 'a', 'b'; at '/n': got string, want integer; and 2 more"},
	}
	for _, tt := range tests {
		d := json.NewDecoder(strings.NewReader(tt.doc))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		err := s.Validate(v)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: Validate(%s) = %q, want %q", tt.why, tt.doc, got, tt.want)
		}
	}
}

func TestCompileRefusesExternalReferences(t *testing.T) {
	for _, ref := range []string{"file:///etc/passwd", "https://example.com/s.json", "other.json"} {
		_, err := descriptor.Compile(json.RawMessage(`{"$ref":"` + ref + `"}`))
		if !errors.Is(err, descriptor.ErrInvalidSchema) {
			t.Errorf("Compile with $ref %s = %v, want ErrInvalidSchema", ref, err)
		}
	}
	// References inside the document still work.
	s, err := descriptor.Compile(json.RawMessage(`{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(1.0); err == nil {
		t.Error("internal $ref was not applied")
	}
}

func TestSchemaConcurrentUse(t *testing.T) {
	s, err := descriptor.Compile(json.RawMessage(objectSchema))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 200 {
				doc := map[string]any{"text": "x"}
				if i%2 == 1 {
					doc = map[string]any{}
				}
				if err := s.Validate(doc); (err != nil) != (i%2 == 1) {
					t.Errorf("goroutine %d: Validate = %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
