package main

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/stepgate/stepgate/commands"
)

// stepLimits are serve's bounds on what one request may make a host do;
// zero fields take the engine's defaults.
type stepLimits struct {
	maxCalls      int
	maxExecutions int
}

func (l *stepLimits) register(fs *flag.FlagSet) {
	fs.Func("max-calls", fmt.Sprintf("the most calls one step may make; a step with more is invalid_input (default %d)", commands.DefaultMaxCalls),
		positiveInt(&l.maxCalls))
	fs.Func("max-executions", "the most tool calls this host runs at once, over all runs; the others queue (default 4×GOMAXPROCS, at least 64)",
		positiveInt(&l.maxExecutions))
}

// positiveInt parses a flag's value into n: a whole number of at least 1.
func positiveInt(n *int) func(string) error {
	return func(s string) error {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			return fmt.Errorf("%q: a whole number of at least 1", s)
		}
		*n = v
		return nil
	}
}
