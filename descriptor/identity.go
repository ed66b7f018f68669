package descriptor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
)

// identityVersion is hashed with every descriptor; bump it only if the canonical form
// changes, knowing that every stored identity then changes too.
const identityVersion = "stepgate.descriptor.v1"

// Identity is the stable digest of d registered in a layer ("process", "location")
// and a scope: the SHA-256, in hex, of a canonical JSON form of d (defaults filled in,
// schemas re-encoded so key order and whitespace do not count), the layer and the scope.
// The same tool registered again after a restart has the same identity; a changed
// name, description, schema, action or effect class has a new one.
func (d Descriptor) Identity(layer, scope string) string {
	d = d.WithDefaults()
	doc := struct {
		V            string      `json:"v"`
		Name         string      `json:"name"`
		Description  string      `json:"description"`
		InputSchema  any         `json:"input_schema"`
		OutputSchema any         `json:"output_schema"`
		Action       string      `json:"action"`
		Effect       EffectClass `json:"effect"`
		Layer        string      `json:"layer"`
		Scope        string      `json:"scope"`
	}{identityVersion, d.Name, d.Description, canonical(d.InputSchema), canonical(d.OutputSchema),
		d.Action, d.Effect, layer, scope}
	b, err := json.Marshal(doc)
	if err != nil {
		// Unreachable: every field is a string or a value decoded from JSON.
		panic("descriptor: marshal identity: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical decodes raw so that json.Marshal writes it back with sorted keys and no
// insignificant whitespace; numbers keep their literal text. An absent schema is null;
// bytes that are not JSON are kept as a string, so they still count.
func canonical(raw json.RawMessage) any {
	if !hasSchema(raw) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	if _, err := dec.Token(); err != io.EOF {
		return string(raw)
	}
	return v
}
