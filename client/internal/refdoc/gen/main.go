// Command gen writes the service's reference pages (package refdoc) into
// a directory: go generate in package client runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/client/internal/refdoc"
)

func main() {
	dir := flag.String("dir", "../docs/reference", "directory to write the pages in")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "refdoc:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	endpoints, err := refdoc.Endpoints()
	if err != nil {
		return err
	}
	errs, err := refdoc.Errors("errors.go")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.md"), []byte(endpoints), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "errors.md"), []byte(errs), 0o644)
}
