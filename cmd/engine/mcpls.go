package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	sgclient "github.com/stepgate/stepgate/client"
)

// runMCPList is `engine mcp ls [--location DIR] [--agent NAME] [--json]`:
// the location's MCP servers, each with its state (connecting, ready, down
// and why, not enabled and why), its tools with their effect classes
// (hidden: outside deny_all or allow), and the tools it skipped and why.
// With --data the engine connects itself; with --nats the serving host
// answers with its own connections.
func runMCPList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mcp ls", stderr)
	cf := connFlags{creates: true} // the location's servers, before any run
	cf.registerClient(fs)
	location := fs.String("location", ".", "the location whose configuration declares the servers")
	agent := fs.String("agent", "build", "the agent whose configuration is read")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine mcp ls: no arguments (--location DIR)"}
	}
	loc, err := filepath.Abs(*location)
	if err != nil {
		return err
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		list, err := api.MCPServers(ctx, sgclient.MCPServersRequest{Location: loc, Agent: *agent})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		printMCPList(stdout, loc, list)
		return nil
	})
}

// printMCPList writes the listing, one block per server.
func printMCPList(w io.Writer, loc string, list *sgclient.MCPServerList) {
	if len(list.Servers) == 0 {
		fmt.Fprintf(w, "no MCP servers for %s\n", loc)
		return
	}
	for _, s := range list.Servers {
		state := s.State
		switch {
		case s.Why != "":
			state += ": " + s.Why
		case s.Error != "":
			state += ": " + s.Error
		}
		var notes []string
		if s.Trust {
			notes = append(notes, "trusted")
		}
		if s.DenyAll {
			notes = append(notes, "deny_all")
		}
		for _, a := range s.Allow {
			notes = append(notes, "allow "+strings.Join(a, ","))
		}
		if s.TicketTTL != "" {
			notes = append(notes, "ticket_ttl "+s.TicketTTL)
		}
		fmt.Fprintf(w, "%s  %s  %s\n", s.Name, s.Transport, state)
		fmt.Fprintf(w, "  declared in %s", s.Source)
		if len(notes) > 0 {
			fmt.Fprintf(w, "; %s", strings.Join(notes, "; "))
		}
		fmt.Fprintln(w)
		if s.Scope != "" {
			fmt.Fprintf(w, "  scope %s\n", s.Scope)
		}
		for _, t := range s.Tools {
			hidden := ""
			if !t.Visible {
				hidden = "  hidden (deny_all or allow)"
			}
			fmt.Fprintf(w, "  %-40s %s%s\n", t.Name, t.Effect, hidden)
		}
		for _, sk := range s.Skipped {
			fmt.Fprintf(w, "  skipped %q: %s\n", sk.Tool, sk.Reason)
		}
	}
	if list.Host != "" {
		fmt.Fprintf(w, "(as host %s sees them)\n", list.Host)
	}
}
