package mcp

import (
	"bytes"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/executor"
)

// RedactResult redacts every part of a mapped result: text, media (its
// bytes and MIME type) and structured content.
func (r *Redactor) RedactResult(res executor.Result) executor.Result {
	if r == nil || len(r.needles) == 0 {
		return res
	}
	for i, p := range res.Parts {
		p.Text = r.Redact(p.Text)
		p.MIME = r.Redact(p.MIME)
		p.Data = r.RedactBytes(p.Data)
		res.Parts[i] = p
	}
	if res.Structured != nil {
		res.Structured = r.RedactJSON(res.Structured)
	}
	return res
}

// RedactJSON redacts a JSON value: every string (keys too) and every
// number whose text holds a secret (it becomes a string). A secret that
// only shows across the value's structure — a key and its value, say — is
// redacted in the encoded text; if that leaves no valid JSON, the value
// becomes a JSON string of the redacted text, as does text that is not
// JSON and holds a secret. Returned as is when it holds no secret.
func (r *Redactor) RedactJSON(raw json.RawMessage) json.RawMessage {
	if r == nil || len(r.needles) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		if len(matches(string(raw), r.needles)) == 0 {
			return raw
		}
		return r.jsonString(string(raw))
	}
	out := raw
	if v, changed := r.redactValue(v); changed {
		b, err := marshalJSON(v)
		if err != nil {
			return r.jsonString(string(raw))
		}
		out = b
	}
	if text := r.Redact(string(out)); text != string(out) {
		if !json.Valid([]byte(text)) {
			return r.jsonString(text)
		}
		out = json.RawMessage(text)
	}
	return out
}

// jsonString is the redacted text as a JSON string.
func (r *Redactor) jsonString(text string) json.RawMessage {
	b, _ := marshalJSON(r.Redact(text)) // a string always encodes
	return b
}

// redactValue redacts the strings of a decoded JSON value and says
// whether anything changed.
func (r *Redactor) redactValue(v any) (any, bool) {
	switch v := v.(type) {
	case string:
		s := r.Redact(v)
		return s, s != v
	case json.Number:
		if s := r.Redact(v.String()); s != v.String() {
			return s, true
		}
		return v, false
	case []any:
		changed := false
		for i, e := range v {
			var c bool
			v[i], c = r.redactValue(e)
			changed = changed || c
		}
		return v, changed
	case map[string]any:
		changed := false
		out := make(map[string]any, len(v))
		for k, e := range v {
			rk := r.Redact(k)
			re, c := r.redactValue(e)
			out[rk] = re
			changed = changed || c || rk != k
		}
		return out, changed
	}
	return v, false
}

// marshalJSON encodes v without HTML escaping and without a newline.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// redactTools returns copies of the listed tools with their names,
// titles, descriptions and schemas redacted, and the names the server
// gave them by their redacted names (calls use the server's; they stay in
// memory). Two tools whose names redact alike collide in Convert, which
// skips both.
func (r *Redactor) redactTools(tools []*sdk.Tool) ([]*sdk.Tool, map[string]string) {
	out := make([]*sdk.Tool, 0, len(tools))
	remote := make(map[string]string, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		c := *t
		c.Name, c.Title, c.Description = r.Redact(t.Name), r.Redact(t.Title), r.Redact(t.Description)
		c.InputSchema = r.redactSchema(t.InputSchema)
		if t.OutputSchema != nil {
			c.OutputSchema = r.redactSchema(t.OutputSchema)
		}
		if t.Annotations != nil {
			a := *t.Annotations
			a.Title = r.Redact(a.Title)
			c.Annotations = &a
		}
		out = append(out, &c)
		remote[c.Name] = t.Name
	}
	return out, remote
}

// redactSchema redacts a schema as JSON; one that does not encode is kept
// for Convert to refuse.
func (r *Redactor) redactSchema(schema any) any {
	if r == nil || len(r.needles) == 0 || schema == nil {
		return schema
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return schema
	}
	return json.RawMessage(r.RedactJSON(b))
}
