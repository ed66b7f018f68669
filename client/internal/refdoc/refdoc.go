// Package refdoc renders the service's reference pages from the code that
// defines them: the endpoints from their JSON Schemas (client/schema), the
// error codes from client/errors.go (the code table and each sentinel's
// doc comment). go generate in package client writes them under
// docs/reference; a test fails when they are stale.
package refdoc

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/client"
)

// schema is the part of a JSON Schema the pages show.
type schema struct {
	Ref        string             `json:"$ref"`
	Defs       map[string]*schema `json:"$defs"`
	Type       any                `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Required   []string           `json:"required"`
	Additional any                `json:"additionalProperties"`
	AnyOf      []*schema          `json:"anyOf"`
}

// UnmarshalJSON reads a schema, or a boolean schema (true: any value) as
// one without constraints.
func (s *schema) UnmarshalJSON(data []byte) error {
	if string(data) == "true" || string(data) == "false" {
		*s = schema{}
		return nil
	}
	type plain schema
	return json.Unmarshal(data, (*plain)(s))
}

// Endpoints is docs/reference/endpoints.md: every endpoint's subject, its
// request and response types, and each type's fields.
func Endpoints() (string, error) {
	names := client.Endpoints()
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("# The service's endpoints\n\nEvery endpoint of the NATS service `stepgate`, its subject, and the fields of its request and\nresponse, generated from the JSON Schemas the service publishes as each endpoint's metadata\n(`client/schema`, made from the Go types) by `go generate ./client`; a test fails when this page\nis stale. What each endpoint does and the errors it answers: [the service API](service-api.md).\n\n")
	b.WriteString("| endpoint | subject | request | response |\n|---|---|---|---|\n")
	defs := map[string]*schema{}
	for _, name := range names {
		req, res, err := client.Schema(name)
		if err != nil {
			return "", err
		}
		rq, err := decode(req, defs)
		if err != nil {
			return "", fmt.Errorf("%s request: %w", name, err)
		}
		rs, err := decode(res, defs)
		if err != nil {
			return "", fmt.Errorf("%s response: %w", name, err)
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", name, client.Subject(name), typeOf(rq), typeOf(rs))
	}
	b.WriteString("\n## Types\n")
	types := make([]string, 0, len(defs))
	for name := range defs {
		types = append(types, name)
	}
	slices.Sort(types)
	for _, name := range types {
		d := defs[name]
		fmt.Fprintf(&b, "\n### %s\n\n", name)
		if len(d.Properties) == 0 {
			fmt.Fprintf(&b, "%s\n", typeOf(d))
			continue
		}
		fields := make([]string, 0, len(d.Properties))
		for f := range d.Properties {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		parts := make([]string, 0, len(fields))
		for _, f := range fields {
			part := fmt.Sprintf("`%s` %s", f, typeOf(d.Properties[f]))
			if slices.Contains(d.Required, f) {
				part += " (required)"
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(&b, "%s\n", strings.Join(parts, " · "))
	}
	return b.String(), nil
}

// decode reads a schema file, adding its definitions to defs.
func decode(data []byte, defs map[string]*schema) (*schema, error) {
	var s schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	for name, d := range s.Defs {
		defs[name] = d
	}
	return &s, nil
}

// typeOf is a schema's type as the page writes it: a link to a defined
// type, a list of one, a map, or a JSON type.
func typeOf(s *schema) string {
	switch {
	case s == nil:
		return "any"
	case s.Ref != "":
		name := strings.TrimPrefix(s.Ref, "#/$defs/")
		return fmt.Sprintf("[%s](#%s)", name, strings.ToLower(name))
	case s.Items != nil:
		return "list of " + typeOf(s.Items)
	case len(s.AnyOf) > 0:
		var parts []string
		for _, a := range s.AnyOf {
			parts = append(parts, typeOf(a))
		}
		return strings.Join(parts, " or ")
	}
	if m, ok := s.Additional.(map[string]any); ok && len(s.Properties) == 0 {
		data, _ := json.Marshal(m)
		var v schema
		_ = json.Unmarshal(data, &v)
		return "map of string to " + typeOf(&v)
	}
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, p := range t {
			parts = append(parts, fmt.Sprint(p))
		}
		return strings.Join(parts, " or ")
	}
	return "any JSON value"
}

// Errors is docs/reference/errors.md: every stable code, the sentinel a Go
// client matches with errors.Is, and the sentinel's doc comment, read from
// errorsFile (client/errors.go).
func Errors(errorsFile string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, errorsFile, nil, parser.ParseComments)
	if err != nil {
		return "", err
	}
	docs, values := map[string]string{}, map[string]string{}
	var table [][2]string // code constant, sentinel
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if n.Doc != nil {
					docs[name.Name] = strings.Join(strings.Fields(n.Doc.Text()), " ")
				}
				if i < len(n.Values) {
					if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						values[name.Name] = strings.Trim(lit.Value, `"`)
					}
				}
			}
		case *ast.CompositeLit:
			if len(n.Elts) == 2 {
				c, ok1 := n.Elts[0].(*ast.Ident)
				e, ok2 := n.Elts[1].(*ast.Ident)
				if ok1 && ok2 && strings.HasPrefix(c.Name, "Code") && strings.HasPrefix(e.Name, "Err") {
					table = append(table, [2]string{c.Name, e.Name})
				}
			}
		}
		return true
	})
	if len(table) == 0 {
		return "", fmt.Errorf("%s: no code table found", errorsFile)
	}
	var b strings.Builder
	b.WriteString("# Error codes\n\nEvery stable code the service answers with (the `Nats-Service-Error-Code` header of a\nservice error), the sentinel a Go client matches with `errors.Is`, and what it means. Generated\nfrom `client/errors.go` by `go generate ./client`; a test fails when this page is stale. A code\nnot listed here is `internal`: anything else, logged by the engine.\n\n| code | Go sentinel | meaning |\n|---|---|---|\n")
	for _, row := range table {
		code, ok := values[row[0]]
		if !ok {
			return "", fmt.Errorf("%s: no value for %s", errorsFile, row[0])
		}
		meaning := strings.TrimPrefix(strings.TrimPrefix(docs[row[1]], row[1]+" "), "means ")
		if meaning != "" {
			meaning = strings.ToUpper(meaning[:1]) + meaning[1:]
		}
		fmt.Fprintf(&b, "| `%s` | `client.%s` | %s |\n", code, row[1], strings.ReplaceAll(meaning, "|", `\|`))
	}
	return b.String(), nil
}
