// Package keydoc renders the configuration file's keys from the config
// package's own decoding types: every struct with yaml-tagged fields whose
// doc comment says which key it decodes ("toolOutput is tool_output: …")
// contributes its fields as keys, each described by its own comment or
// its type's. go generate in package config writes the page; a test fails
// when it is stale, so a key added to the decoder is a key in the docs.
package keydoc

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/internal/gosrc"
)

// pathRE finds the key path a type's comment names: "<type> is <path>".
var pathRE = regexp.MustCompile(`^\w+ is ([a-z_]+(?:(?:\.[a-zA-Z_]+)|\[i\])*)`)

// key is one key of the file.
type key struct{ path, what string }

// Page is docs/reference/config-keys.md, from the Go files of dir (the
// config package).
func Page(dir string) (string, error) {
	files, err := gosrc.Files(dir, "config")
	if err != nil {
		return "", err
	}
	docs := map[string]string{}             // type name → its doc comment, one line
	structs := map[string]*ast.StructType{} // types with yaml-tagged fields
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(g.Specs) == 1 {
					doc = g.Doc
				}
				if doc != nil {
					docs[ts.Name.Name] = strings.Join(strings.Fields(doc.Text()), " ")
				}
				if st, ok := ts.Type.(*ast.StructType); ok && tagged(st) {
					structs[ts.Name.Name] = st
				}
			}
		}
	}
	var keys []key
	for name, st := range structs {
		base := ""
		if name != "document" {
			m := pathRE.FindStringSubmatch(docs[name])
			if m == nil {
				return "", fmt.Errorf("type %s decodes keys but its comment does not say which (want \"%s is PATH …\")", name, name)
			}
			base = m[1] + "."
		}
		for _, fld := range st.Fields.List {
			tag := yamlTag(fld)
			if tag == "" {
				continue
			}
			what := ""
			if fld.Doc != nil {
				what = strings.Join(strings.Fields(fld.Doc.Text()), " ")
			} else if id, ok := fld.Type.(*ast.Ident); ok {
				what = strings.TrimPrefix(docs[id.Name], id.Name+" is ")
			}
			if what == "" {
				return "", fmt.Errorf("%s.%s (key %s%s) has no doc comment, nor has its type", name, fld.Names[0].Name, base, tag)
			}
			keys = append(keys, key{base + tag, what})
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.path, b.path) })
	var b strings.Builder
	b.WriteString("# The configuration's keys\n\nEvery key of a configuration file (the user's `~/.config/stepgate/config.yaml`, a project's\n`.stepgate/config.yaml`, the fleet's pushed document), as the decoder reads it. Generated from the\n`config` package's decoding types by `go generate ./config`; a test fails when this page is stale.\n`NAME` is a name of your choosing, `[i]` an item of a list. How the layers combine and what a\nproject file may say: [the configuration](configuration.md).\n\n| key | what it is |\n|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.path, strings.ReplaceAll(k.what, "|", `\|`))
	}
	return b.String(), nil
}

// tagged reports whether a struct has a yaml-tagged field.
func tagged(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if yamlTag(f) != "" {
			return true
		}
	}
	return false
}

// yamlTag is a field's yaml key ("" for none).
func yamlTag(f *ast.Field) string {
	if f.Tag == nil {
		return ""
	}
	tag := reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	return name
}
