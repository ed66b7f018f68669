// Command gen writes the service's JSON Schemas (package schemagen) into a
// directory: go generate in package client runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/stepgate/stepgate/client/internal/schemagen"
)

func main() {
	dir := flag.String("dir", "schema", "directory to write the schemas in")
	flag.Parse()
	if err := schemagen.Write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
