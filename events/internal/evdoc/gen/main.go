// Command gen writes the log's events page (package evdoc): go generate in
// package events runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/stepgate/stepgate/events/internal/evdoc"
)

func main() {
	out := flag.String("o", "../docs/reference/events.md", "the page to write")
	flag.Parse()
	page, err := evdoc.Page(".")
	if err == nil {
		err = os.WriteFile(*out, []byte(page), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "evdoc:", err)
		os.Exit(1)
	}
}
