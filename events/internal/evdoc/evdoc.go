// Package evdoc renders the log's vocabulary for an outside reader of the
// stream, from the events package's own source: the subjects, the commit
// envelope, every event type with its wire name and fields, and the types
// they hold. go generate in package events writes the page; a test fails
// when it is stale.
package evdoc

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/internal/gosrc"
)

// typeDoc is one struct type of the package: its comment and fields.
type typeDoc struct {
	name, doc string
	fields    []fieldDoc
}

// fieldDoc is one JSON field.
type fieldDoc struct{ json, goType, doc string }

// Page is docs/reference/events.md, from the Go files of dir (the events
// package).
func Page(dir string) (string, error) {
	files, err := gosrc.Files(dir, "events")
	if err != nil {
		return "", err
	}
	types := map[string]typeDoc{}
	var wire [][2]string      // Type constant's value, struct name
	for _, f := range files { // declaration order, file by file: the same page every time
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if strings.HasPrefix(n.Name, "Type") && i < len(s.Values) {
							if lit, ok := s.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								wire = append(wire, [2]string{strings.Trim(lit.Value, `"`), strings.TrimPrefix(n.Name, "Type")})
							}
						}
					}
				case *ast.TypeSpec:
					st, ok := s.Type.(*ast.StructType)
					if !ok || !s.Name.IsExported() {
						continue
					}
					doc := s.Doc
					if doc == nil && len(g.Specs) == 1 {
						doc = g.Doc
					}
					td := typeDoc{name: s.Name.Name, doc: oneLine(doc)}
					for _, fld := range st.Fields.List {
						tag := jsonTag(fld)
						if tag == "" || len(fld.Names) == 0 {
							continue
						}
						td.fields = append(td.fields, fieldDoc{tag, types2(fld.Type), oneLine(fld.Doc)})
					}
					if len(td.fields) > 0 {
						types[td.name] = td
					}
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("# The log's events\n\nWhat an outside reader of the stream needs: every message of the log is one commit (the envelope\nbelow) on a subject under `sg.`, holding the events of one step or one fact, each with its wire\nname and its own schema version. Generated from the `events` package's source by\n`go generate ./events`; a test fails when this page is stale. The fields are JSON.\n")
	shown := map[string]bool{}
	if c, ok := types["Commit"]; ok {
		b.WriteString("\n## The commit\n\n")
		writeType(&b, c)
		shown["Commit"] = true
	}
	b.WriteString("\n## Event types\n\n| wire name | payload |\n|---|---|\n")
	for _, w := range wire {
		if _, ok := types[w[1]]; ok {
			fmt.Fprintf(&b, "| `%s` | [%s](#%s) |\n", w[0], w[1], strings.ToLower(w[1]))
		} else {
			fmt.Fprintf(&b, "| `%s` | — |\n", w[0])
		}
	}
	for _, w := range wire {
		if td, ok := types[w[1]]; ok && !shown[w[1]] {
			fmt.Fprintf(&b, "\n### %s\n\n", td.name)
			writeType(&b, td)
			shown[w[1]] = true
		}
	}
	b.WriteString("\n## The types they hold\n")
	var rest []string
	for name := range types {
		if !shown[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		fmt.Fprintf(&b, "\n### %s\n\n", name)
		writeType(&b, types[name])
	}
	return b.String(), nil
}

// writeType writes a type's comment and its fields, one a line.
func writeType(b *strings.Builder, td typeDoc) {
	if td.doc != "" {
		fmt.Fprintf(b, "%s\n\n", td.doc)
	}
	for _, f := range td.fields {
		name, omit := strings.CutSuffix(f.json, " omitempty")
		kind := f.goType
		if omit {
			kind += ", absent when empty"
		}
		line := fmt.Sprintf("- `%s` (%s)", name, kind)
		if f.doc != "" {
			line += ": " + f.doc
		}
		b.WriteString(line + "\n")
	}
}

// oneLine is a comment group's text on one line.
func oneLine(c *ast.CommentGroup) string {
	if c == nil {
		return ""
	}
	return strings.Join(strings.Fields(c.Text()), " ")
}

// jsonTag is a field's JSON name, with ", omitempty" when it has it ("" for
// none or "-").
func jsonTag(f *ast.Field) string {
	if f.Tag == nil {
		return ""
	}
	tag := reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" || name == "-" {
		return ""
	}
	if strings.Contains(opts, "omitempty") {
		return name + " omitempty"
	}
	return name
}

// types2 is a field's Go type as written.
func types2(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return types2(t.X)
	case *ast.ArrayType:
		return "list of " + types2(t.Elt)
	case *ast.MapType:
		return "map of " + types2(t.Key) + " to " + types2(t.Value)
	case *ast.SelectorExpr:
		return types2(t.X) + "." + t.Sel.Name
	}
	return "value"
}
