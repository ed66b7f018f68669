package descriptor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
}

// schemaURL names the one in-memory resource a Compile call adds.
const schemaURL = "stepgate:///schema.json"

// printer renders the schema library's messages; the library itself uses English.
var printer = message.NewPrinter(language.English)

// maxDetails caps how many validation problems one error lists.
const maxDetails = 3

// Compile parses and compiles raw. Schemas without "$schema" are read as draft 2020-12.
// References must stay inside the document: nothing is ever loaded from a file or the
// network. Errors wrap ErrInvalidSchema.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSchema, oneLine(err.Error()))
	}
	return &Schema{s: s}, nil
}

// noLoader refuses every external reference, so a schema from an untrusted source
// (an MCP server, a plugin) cannot make the engine read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %s is not allowed", url)
}

// Validate checks doc, a value shaped like the result of decoding JSON into any
// (map[string]any, []any, string, float64 or json.Number, bool, nil). The error text
// is a short one-line detail such as "missing property 'text'"; with several problems
// it names the first few in a stable order.
func (s *Schema) Validate(doc any) error {
	err := s.s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return errors.New(oneLine(err.Error()))
	}
	var details []string
	leaves(ve, &details)
	slices.Sort(details)
	details = slices.Compact(details)
	if len(details) == 0 {
		return errors.New("value does not match the schema")
	}
	msg := strings.Join(details[:min(len(details), maxDetails)], "; ")
	if n := len(details) - maxDetails; n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return errors.New(msg)
}

// leaves collects one line per innermost cause: the groups above them
// ("validation failed", "'anyOf' failed") only repeat what the leaves say.
func leaves(e *jsonschema.ValidationError, out *[]string) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			leaves(c, out)
		}
		return
	}
	var msg string
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		// The library lists the properties in map order: sort them so
		// the same input always gives the same text.
		props := slices.Sorted(slices.Values(k.Properties))
		if len(props) == 1 {
			msg = fmt.Sprintf("additional property %s not allowed", quote(props[0]))
		} else {
			quoted := make([]string, len(props))
			for i, p := range props {
				quoted[i] = quote(p)
			}
			msg = fmt.Sprintf("additional properties %s not allowed", strings.Join(quoted, ", "))
		}
	default:
		msg = k.LocalizedString(printer)
	}
	if len(e.InstanceLocation) > 0 {
		msg = fmt.Sprintf("at %s: %s", quote("/"+strings.Join(escapePointer(e.InstanceLocation), "/")), msg)
	}
	*out = append(*out, oneLine(msg))
}

func escapePointer(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return out
}

// quote writes s the way the schema library does: single quotes, Go escapes inside.
func quote(s string) string {
	q := fmt.Sprintf("%q", s)
	q = strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	return "'" + strings.ReplaceAll(q, `'`, `\'`) + "'"
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
