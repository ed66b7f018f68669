// Package gosrc reads one package's Go source for the generators of the
// reference pages (config's keys, the log's events): its files with their
// comments, in file-name order, tests left out.
package gosrc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// Files parses the non-test Go files of dir that belong to package name,
// sorted by file name, so that a page made from them is the same every
// time.
func Files(dir, name string) ([]*ast.File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name == name {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no Go file of package %s", dir, name)
	}
	return files, nil
}
