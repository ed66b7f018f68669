package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/stepgate/stepgate/commands"
)

// runFork is `engine fork RUN --at STEP`: a new run whose first STEP steps
// are RUN's, copied from the log (no tool runs), pinned to RUN's rules.
func runFork(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fork", stderr)
	var cf connFlags
	cf.registerClient(fs)
	at := fs.Int("at", 0, "the last step of RUN the fork copies (from 1; it must be final)")
	id := fs.String("id", "", "the fork's run id (a ULID); sent again, the same fork is finished, not made twice")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine fork: want exactly one run id"}
	}
	if *at < 1 {
		return usageError{"engine fork: --at STEP is required (a step from 1)"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		out, err := api.Fork(ctx, commands.ForkRequest{Run: fs.Arg(0), At: *at, Fork: *id})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		_, err = fmt.Fprintf(stdout, "%s forked from %s at step %d (commit %s); its next step is %d\n",
			out.Run, out.ForkedFrom.Run, out.ForkedFrom.Step, out.ForkedFrom.Commit, out.Steps+1)
		return err
	})
}
