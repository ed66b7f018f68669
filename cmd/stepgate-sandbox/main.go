// Command stepgate-sandbox is the engine's sandbox helper as a small
// binary of its own (see sandbox.WithHelper): it starts faster than the
// engine, whose package initialisation runs before its helper stage. It
// does nothing when run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/stepgate/stepgate/executor/sandbox"
)

func main() {
	sandbox.MaybeRun()
	fmt.Fprintln(os.Stderr, "stepgate-sandbox is the engine's sandbox helper; the engine runs it (see docs/guide/sandbox.md)")
	os.Exit(2)
}
