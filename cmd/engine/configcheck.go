package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// runConfig is `engine config check [--location DIR] [--agent NAME]`: read
// every layer, report the first error with file:line and key (exit 1), or
// print the effective ruleset with each rule's source.
func runConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "check" {
		return usageError{"engine config: the only subcommand is check"}
	}
	fs := newFlags("config check", stderr)
	location := fs.String("location", ".", "the location whose project configuration applies")
	agent := fs.String("agent", "build", "the agent to resolve")
	data := fs.String("data", defaultData, "the data directory (its tool-output directory is allowed to build)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	loc, err := filepath.Abs(*location)
	if err != nil {
		return err
	}
	l := loader(*data)
	eff, err := l.Effective(*agent, loc)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(eff)
	}
	fmt.Fprintf(stdout, "agent %s in %s\n", eff.Agent, loc)
	for _, f := range eff.Files {
		fmt.Fprintf(stdout, "  file %s\n", f)
	}
	for _, r := range eff.Rules {
		ttl := ""
		if r.TicketTTL != "" {
			ttl = "  ticket_ttl " + r.TicketTTL
		}
		fmt.Fprintf(stdout, "  %-5s %-20s %-28q %s%s\n", r.Effect, r.Action, r.Resource, gate.Source(r.Source).Label(), ttl)
	}
	if eff.TicketTTL > 0 {
		fmt.Fprintf(stdout, "  ticket_ttl %s\n", eff.TicketTTL)
	}
	if eff.MaxLines > 0 || eff.MaxBytes > 0 {
		fmt.Fprintf(stdout, "  tool_output max_lines %d max_bytes %d\n", eff.MaxLines, eff.MaxBytes)
	}
	return nil
}

// defaultData is the data directory when --data is not given.
const defaultData = "stepgate-data"

// loader is the configuration this binary reads: the built-in agents, the
// user's file and the location's project file.
func loader(dataDir string) config.Loader {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return config.Loader{UserFile: config.UserFile(), ToolOutputDir: filepath.Join(dataDir, "tool-output")}
}
