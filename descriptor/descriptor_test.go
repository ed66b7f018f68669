package descriptor_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
)

const objectSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

func TestValidate(t *testing.T) {
	valid := descriptor.Descriptor{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(objectSchema)}
	tests := []struct {
		why    string
		change func(d *descriptor.Descriptor)
		want   error // nil: valid
	}{
		{why: "a minimal descriptor is valid", change: func(*descriptor.Descriptor) {}},
		{why: "output schema is optional, JSON null counts as absent",
			change: func(d *descriptor.Descriptor) { d.OutputSchema = json.RawMessage("null") }},
		{why: "a full descriptor is valid", change: func(d *descriptor.Descriptor) {
			d.OutputSchema = json.RawMessage(`{"type":"string"}`)
			d.Action = "read"
			d.Effect = descriptor.Idempotent
		}},
		{why: "name rule", want: descriptor.ErrInvalidName,
			change: func(d *descriptor.Descriptor) { d.Name = "echo!" }},
		{why: "action follows the name rule", want: descriptor.ErrInvalidAction,
			change: func(d *descriptor.Descriptor) { d.Action = "*" }},
		{why: "effect must be one of three", want: descriptor.ErrInvalidEffect,
			change: func(d *descriptor.Descriptor) { d.Effect = "ReadOnly" }},
		{why: "input schema is required", want: descriptor.ErrInvalidSchema,
			change: func(d *descriptor.Descriptor) { d.InputSchema = nil }},
		{why: "input schema must be JSON", want: descriptor.ErrInvalidSchema,
			change: func(d *descriptor.Descriptor) { d.InputSchema = json.RawMessage(`{"type":`) }},
		{why: "input schema must describe an object", want: descriptor.ErrInvalidSchema,
			change: func(d *descriptor.Descriptor) { d.InputSchema = json.RawMessage(`{"type":"string"}`) }},
		{why: "input schema must compile", want: descriptor.ErrInvalidSchema,
			change: func(d *descriptor.Descriptor) {
				d.InputSchema = json.RawMessage(`{"type":"object","minProperties":"two"}`)
			}},
		{why: "output schema must compile", want: descriptor.ErrInvalidSchema,
			change: func(d *descriptor.Descriptor) { d.OutputSchema = json.RawMessage(`{"type":"strin"}`) }},
	}
	for _, tt := range tests {
		d := valid
		tt.change(&d)
		err := d.Validate()
		if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("%s: Validate() = %v, want %v", tt.why, err, tt.want)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	d := descriptor.Descriptor{Name: "apply_patch"}.WithDefaults()
	if d.Action != "edit" || d.Effect != descriptor.SideEffecting {
		t.Errorf("WithDefaults() = action %q effect %q, want edit side_effecting", d.Action, d.Effect)
	}
	d = descriptor.Descriptor{Name: "x", Action: "read", Effect: descriptor.ReadOnly}.WithDefaults()
	if d.Action != "read" || d.Effect != descriptor.ReadOnly {
		t.Errorf("WithDefaults() overwrote set fields: action %q effect %q", d.Action, d.Effect)
	}
}

func TestDescriptorJSON(t *testing.T) {
	d, err := descriptor.For[readIn, string]("read", "Read.", descriptor.WithEffect(descriptor.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back descriptor.Descriptor
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Identity("process", "") != d.Identity("process", "") {
		t.Errorf("a JSON round trip changed the identity:\n%s", b)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "description", "input_schema", "output_schema", "action", "effect"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("JSON form lacks %q: %s", k, b)
		}
	}
}
