package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor/sandbox"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step"
)

// runConfig is `engine config check [--location DIR] [--agent NAME]`: read
// every layer, report the first error with file:line and key (exit 1), or
// print the effective ruleset with each rule's source, whether the project
// file is trusted and what it asked for and was not granted, and the
// location's MCP servers (secrets as their references).
//
// With --nats the user layer is the fleet's configuration document (see
// engine config push), as the hosts of that cluster read it; when the
// fleet has none, the local user file, as they do.
func runConfig(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "push":
			return runConfigPush(ctx, args[1:], stdout, stderr)
		case "show":
			return runConfigShow(ctx, args[1:], stdout, stderr)
		}
	}
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") { // engine help config, engine config -h
			fmt.Fprintln(stderr, "usage: engine config <subcommand> [flags]")
			for _, d := range subDocs() {
				if sub, ok := strings.CutPrefix(d.name, "config "); ok {
					fmt.Fprintf(stderr, "  %-8s %s\n", sub, d.summary)
				}
			}
			return flag.ErrHelp
		}
		return usageError{"engine config: the subcommands are check, push and show"}
	}
	fs := newFlags("config check", stderr)
	var cf connFlags
	cf.register(fs)
	location := fs.String("location", ".", "the location whose project configuration applies")
	agent := fs.String("agent", "build", "the agent to resolve")
	stream := fs.String("stream", step.DefaultStream, "with --nats: the stream's name (the bucket is STREAM"+step.ConfigBucketSuffix+")")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine config check: takes no arguments (the location is --location DIR)"}
	}
	loc, err := filepath.Abs(*location)
	if err != nil {
		return err
	}
	l := loader(cf.data)
	if cf.natsURL != "" {
		if l.Fleet, err = cf.fleetDoc(ctx, *stream); err != nil {
			return err
		}
		if l.Fleet == nil {
			fmt.Fprintf(stderr, "the fleet has no configuration document: checking the local user file, as its hosts use it\n")
		}
	}
	eff, err := l.Check(*agent, loc)
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
	switch eff.ProjectLayer {
	case "trusted":
		fmt.Fprintf(stdout, "  project trusted: its location is in the user's trusted_projects\n")
	case "narrowing":
		fmt.Fprintf(stdout, "  project narrows only: its location is not in the user's trusted_projects\n")
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
	printSandbox(stdout, eff.Sandbox, sandbox.Probe())
	for _, r := range eff.NotGranted {
		fmt.Fprintf(stdout, "  not granted: %s (project config): %s\n", r.Asked, r.Got)
	}
	printMCPServers(stdout, eff.MCPServers)
	return nil
}

// printMCPServers lists the location's MCP servers as configured, secrets
// as their references.
func printMCPServers(w io.Writer, srvs []config.MCPServer) {
	for _, s := range srvs {
		state := "enabled"
		if !s.Enabled {
			state = "not enabled: " + s.Why
		}
		fmt.Fprintf(w, "  mcp server %s  %s  source %s  trust %v  %s\n", s.Name, s.Transport(), s.Source, s.Trust, state)
		if s.URL != "" {
			fmt.Fprintf(w, "    url %s\n", s.URL)
		} else {
			fmt.Fprintf(w, "    command %q\n", s.Command)
		}
		if sb := s.Sandbox; sb.Sandboxed() {
			fmt.Fprintf(w, "    sandbox %s  network %s", sb.Mode, sb.Net())
			if len(sb.Writable) > 0 {
				fmt.Fprintf(w, "  writable %q", sb.Writable)
			}
			if len(sb.Denied) > 0 {
				fmt.Fprintf(w, "  denied %q", sb.Denied)
			}
			fmt.Fprintln(w)
		}
		for _, kv := range []struct {
			what string
			m    map[string]string
		}{{"env", s.Env}, {"header", s.Headers}} {
			for _, k := range slices.Sorted(maps.Keys(kv.m)) {
				fmt.Fprintf(w, "    %s %s=%q\n", kv.what, k, kv.m[k])
			}
		}
		fmt.Fprintf(w, "    deny_all %v", s.DenyAll)
		if len(s.Allow) > 0 {
			lists := make([]string, len(s.Allow))
			for i, l := range s.Allow {
				lists[i] = fmt.Sprintf("%q", l)
			}
			fmt.Fprintf(w, "  allow %s", strings.Join(lists, " ∩ "))
		}
		if s.TicketTTL > 0 {
			fmt.Fprintf(w, "  ticket_ttl %s", s.TicketTTL)
		}
		if len(s.Narrowed) > 0 {
			fmt.Fprintf(w, "  narrowed by %s", strings.Join(s.Narrowed, ", "))
		}
		fmt.Fprintln(w)
	}
}

// defaultData is the data directory when --data is not given.
const defaultData = "stepgate-data"

// loader is the configuration this binary reads: the built-in agents, the
// user's file and the location's project file.
func loader(dataDir string) config.Loader { return hosting.Loader(dataDir) }

// printSandbox says the agent's sandbox profile (before a host's --sandbox
// floor) and what this host can enforce, so that a profile the host cannot
// give is seen before a call is refused for it.
func printSandbox(w io.Writer, p config.SandboxProfile, h sandbox.Host) {
	if p.Sandboxed() {
		fmt.Fprintf(w, "  sandbox %s, network %s", p.Mode, p.Net())
		if len(p.Allow) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(p.Allow, ", "))
		}
		if p.Escalates() {
			fmt.Fprint(w, ", escalate ask (a call the sandbox refused asks to run outside it)")
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  sandbox off: commands run with this user's authority (unless a host's --sandbox says otherwise)")
	}
	can := "this host can enforce: "
	if h.LandlockABI > 0 {
		can += fmt.Sprintf("Landlock ABI %d", h.LandlockABI)
	} else {
		can += "no Landlock"
	}
	for _, ns := range []struct {
		name string
		ok   bool
	}{{"user", h.UserNS}, {"mount", h.MountNS}, {"pid", h.PIDNS}, {"net", h.NetNS}} {
		if ns.ok {
			can += ", " + ns.name + " namespaces"
		} else {
			can += ", no " + ns.name + " namespaces"
		}
	}
	if h.Seccomp {
		can += ", seccomp"
	} else {
		can += ", no seccomp"
	}
	fmt.Fprintf(w, "  %s\n", can)
}
