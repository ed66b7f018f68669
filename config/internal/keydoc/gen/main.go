// Command gen writes the configuration's keys page (package keydoc): go
// generate in package config runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/stepgate/stepgate/config/internal/keydoc"
)

func main() {
	out := flag.String("o", "../docs/reference/config-keys.md", "the page to write")
	flag.Parse()
	page, err := keydoc.Page(".")
	if err == nil {
		err = os.WriteFile(*out, []byte(page), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "keydoc:", err)
		os.Exit(1)
	}
}
