package descriptor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
)

const draft = "https://json-schema.org/draft/2020-12/schema"

type readIn struct {
	Path   string   `json:"path" jsonschema:"description=File to read"`
	Offset int      `json:"offset,omitempty"`
	Tags   []string `json:"tags,omitzero"`
	Opts   struct {
		Follow bool `json:"follow"`
	} `json:"opts"`
	//lint:ignore U1000 unexported fields never reach the schema: that is what this field tests
	hidden string
	Skip   string `json:"-"`
}

type readOut struct {
	Lines []string `json:"lines"`
	More  bool     `json:"more,omitempty"`
}

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children"`
}

type tree map[string]tree

type chanIn struct {
	C chan int `json:"c"`
}

func decode(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("schema is not JSON: %v\n%s", err, raw)
	}
	return v
}

func TestForSchemas(t *testing.T) {
	d, err := descriptor.For[readIn, readOut]("read", "Read a file.")
	if err != nil {
		t.Fatal(err)
	}
	wantIn := map[string]any{
		"$schema":              draft,
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"path", "opts"},
		"properties": map[string]any{
			"path":   map[string]any{"type": "string", "description": "File to read"},
			"offset": map[string]any{"type": "integer"},
			"tags":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"opts": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []any{"follow"},
				"properties":           map[string]any{"follow": map[string]any{"type": "boolean"}},
			},
		},
	}
	wantOut := map[string]any{
		"$schema":              draft,
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"lines"},
		"properties": map[string]any{
			"lines": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"more":  map[string]any{"type": "boolean"},
		},
	}
	if diff := cmp.Diff(wantIn, decode(t, d.InputSchema)); diff != "" {
		t.Errorf("input schema (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantOut, decode(t, d.OutputSchema)); diff != "" {
		t.Errorf("output schema (-want +got):\n%s", diff)
	}
}

func TestForStringOutput(t *testing.T) {
	d, err := descriptor.For[map[string]string, string]("tag", "Tag things.")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"$schema": draft, "type": "string"}
	if diff := cmp.Diff(want, decode(t, d.OutputSchema)); diff != "" {
		t.Errorf("output schema (-want +got):\n%s", diff)
	}
	wantIn := map[string]any{"$schema": draft, "type": "object", "additionalProperties": map[string]any{"type": "string"}}
	if diff := cmp.Diff(wantIn, decode(t, d.InputSchema)); diff != "" {
		t.Errorf("input schema (-want +got):\n%s", diff)
	}
}

func TestForDefaults(t *testing.T) {
	tests := []struct {
		why        string
		name       string
		opts       []descriptor.Option
		wantAction string
		wantEffect descriptor.EffectClass
	}{
		{why: "action defaults to the name", name: "grep", wantAction: "grep", wantEffect: descriptor.SideEffecting},
		{why: "write asks for edit", name: "write", wantAction: "edit", wantEffect: descriptor.SideEffecting},
		{why: "edit asks for edit", name: "edit", wantAction: "edit", wantEffect: descriptor.SideEffecting},
		{why: "apply_patch asks for edit", name: "apply_patch", wantAction: "edit", wantEffect: descriptor.SideEffecting},
		{why: "options override both defaults", name: "read_file",
			opts:       []descriptor.Option{descriptor.WithAction("read"), descriptor.WithEffect(descriptor.ReadOnly)},
			wantAction: "read", wantEffect: descriptor.ReadOnly},
	}
	for _, tt := range tests {
		d, err := descriptor.For[readIn, string](tt.name, "x", tt.opts...)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		got := [2]string{d.Action, string(d.Effect)}
		if diff := cmp.Diff([2]string{tt.wantAction, string(tt.wantEffect)}, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestForDeterministic(t *testing.T) {
	a, err := descriptor.For[readIn, readOut]("read", "Read a file.")
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		b, err := descriptor.For[readIn, readOut]("read", "Read a file.")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.InputSchema, b.InputSchema) || !bytes.Equal(a.OutputSchema, b.OutputSchema) {
			t.Fatalf("schemas differ between calls:\n%s\n%s", a.InputSchema, b.InputSchema)
		}
	}
}

func TestForErrors(t *testing.T) {
	tests := []struct {
		why  string
		for_ func() error
		want error
	}{
		{why: "name breaks the rule", want: descriptor.ErrInvalidName,
			for_: func() error { _, err := descriptor.For[readIn, string]("9lives", "x"); return err }},
		{why: "input must be an object", want: descriptor.ErrInvalidSchema,
			for_: func() error { _, err := descriptor.For[string, string]("t", "x"); return err }},
		{why: "input of type any has no object schema", want: descriptor.ErrInvalidSchema,
			for_: func() error { _, err := descriptor.For[any, string]("t", "x"); return err }},
		{why: "recursive types would give an infinite schema", want: descriptor.ErrUnsupportedType,
			for_: func() error { _, err := descriptor.For[node, string]("t", "x"); return err }},
		{why: "recursive output is refused as well", want: descriptor.ErrUnsupportedType,
			for_: func() error { _, err := descriptor.For[readIn, []node]("t", "x"); return err }},
		{why: "recursion through a named map, no struct involved", want: descriptor.ErrUnsupportedType,
			for_: func() error { _, err := descriptor.For[tree, string]("t", "x"); return err }},
		{why: "channels cannot be JSON", want: descriptor.ErrUnsupportedType,
			for_: func() error { _, err := descriptor.For[chanIn, string]("t", "x"); return err }},
		{why: "unknown effect class", want: descriptor.ErrInvalidEffect,
			for_: func() error {
				_, err := descriptor.For[readIn, string]("t", "x", descriptor.WithEffect("sometimes"))
				return err
			}},
		{why: "action with a space", want: descriptor.ErrInvalidAction,
			for_: func() error {
				_, err := descriptor.For[readIn, string]("t", "x", descriptor.WithAction("read file"))
				return err
			}},
	}
	for _, tt := range tests {
		if err := tt.for_(); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want an error wrapping %v", tt.why, err, tt.want)
		}
	}
}

func TestForCommonTypes(t *testing.T) {
	type in struct {
		When  time.Time       `json:"when"`
		Raw   json.RawMessage `json:"raw,omitempty"`
		Any   map[string]any  `json:"any,omitempty"`
		Ptr   *int            `json:"ptr,omitempty"`
		Bytes []byte          `json:"bytes,omitempty"`
		Grid  [][]float64     `json:"grid,omitempty"`
	}
	d, err := descriptor.For[in, []readOut]("common", "x")
	if err != nil {
		t.Fatal(err)
	}
	props := decode(t, d.InputSchema).(map[string]any)["properties"].(map[string]any)
	want := map[string]any{"type": "string", "format": "date-time"}
	if diff := cmp.Diff(want, props["when"]); diff != "" {
		t.Errorf("time.Time (-want +got):\n%s", diff)
	}
}
