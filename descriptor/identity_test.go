package descriptor_test

import (
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
)

func TestIdentity(t *testing.T) {
	base := func() descriptor.Descriptor {
		d, err := descriptor.For[readIn, readOut]("read", "Read a file.")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	id := base().Identity("process", "")
	tests := []struct {
		why   string
		d     descriptor.Descriptor
		layer string
		scope string
		same  bool
	}{
		{why: "the same types give the same identity (a restart)", d: base(), layer: "process", same: true},
		{why: "schema key order and whitespace do not count", layer: "process", same: true, d: func() descriptor.Descriptor {
			d := base()
			var v map[string]any
			_ = json.Unmarshal(d.InputSchema, &v)
			d.InputSchema, _ = json.MarshalIndent(v, "", "   ")
			return d
		}()},
		{why: "defaults filled in or left empty are the same tool", layer: "process", same: true, d: func() descriptor.Descriptor {
			d := base()
			d.Action, d.Effect = "", ""
			return d
		}()},
		{why: "a changed description is a new tool", layer: "process", d: func() descriptor.Descriptor {
			d := base()
			d.Description = "Read a text file."
			return d
		}()},
		{why: "a changed input schema is a new tool", layer: "process", d: func() descriptor.Descriptor {
			d, err := descriptor.For[readOut, readOut]("read", "Read a file.")
			if err != nil {
				t.Fatal(err)
			}
			return d
		}()},
		{why: "a changed output schema is a new tool", layer: "process", d: func() descriptor.Descriptor {
			d, err := descriptor.For[readIn, string]("read", "Read a file.")
			if err != nil {
				t.Fatal(err)
			}
			return d
		}()},
		{why: "a changed effect class is a new tool", layer: "process", d: func() descriptor.Descriptor {
			d := base()
			d.Effect = descriptor.ReadOnly
			return d
		}()},
		{why: "another layer is another registration", d: base(), layer: "location"},
		{why: "another scope is another registration", d: base(), layer: "process", scope: "ws-1"},
	}
	for _, tt := range tests {
		got := tt.d.Identity(tt.layer, tt.scope)
		if (got == id) != tt.same {
			t.Errorf("%s: identity %s, base %s, want same=%v", tt.why, got, id, tt.same)
		}
	}
}

// TestIdentityPinned pins the digest of one descriptor: identities are stored in the
// log, so a change of the canonical form must be a deliberate, versioned decision.
func TestIdentityPinned(t *testing.T) {
	d := descriptor.Descriptor{
		Name:         "echo",
		Description:  "Echo the text.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		OutputSchema: json.RawMessage(`{"type":"string"}`),
	}
	const want = "f902671825ea8950b02321f93d9595cbb494c90f17ee73ff532fc98c8002dd3d"
	if got := d.Identity("process", ""); got != want {
		t.Errorf("Identity = %s, want %s", got, want)
	}
}
