package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/stepgate/stepgate/cmd/engine/mcpgw"
)

// mcpVerbs are the subcommands of `engine mcp`, documented in subDocs.
func mcpVerbs() []verb {
	runs := map[string]func(context.Context, []string, io.Writer, io.Writer) error{"mcp serve": runMCPServe, "mcp ls": runMCPList}
	var vs []verb
	for _, d := range subDocs() {
		if r, ok := runs[d.name]; ok {
			d.name = strings.TrimPrefix(d.name, "mcp ")
			vs = append(vs, verb{d, r})
		}
	}
	return vs
}

// runMCP is `engine mcp <subcommand>`.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	subs := mcpVerbs()
	if len(args) > 0 {
		for _, v := range subs {
			if v.name == args[0] {
				return v.run(ctx, args[1:], stdout, stderr)
			}
		}
	}
	fmt.Fprintln(stderr, "usage: engine mcp <subcommand> [flags]")
	for _, v := range subs {
		fmt.Fprintf(stderr, "  %-8s %s\n", v.name, v.summary)
	}
	if len(args) == 0 {
		return usageError{"engine mcp: no subcommand given"}
	}
	if args[0] == "-h" || args[0] == "--help" { // engine help mcp, engine mcp -h
		return flag.ErrHelp
	}
	return usageError{fmt.Sprintf("engine mcp: unknown subcommand %q", args[0])}
}

// runMCPServe is `engine mcp serve`: the flags, the engine they name, and
// the gateway (mcpgw) on stdio or HTTP. Logs go to stderr only: on stdio,
// stdout carries nothing but the protocol.
func runMCPServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mcp serve", stderr)
	cf := connFlags{creates: true} // a run may be the first on --data
	cf.registerClient(fs)
	cf.registerTestTools(fs)
	location := fs.String("location", ".", "the run's workspace root")
	agent := fs.String("agent", "build", "the agent whose rules apply")
	project := fs.String("project", "", "the run's project (saved approvals); default: derived from the location")
	session := fs.String("session", "default", "the session's name: with the location, agent and project it names the run, so a restarted server finds the same run and its tickets")
	listen := fs.String("listen", "", "serve streamable HTTP on HOST:PORT instead of stdio (loopback only unless --listen-remote)")
	remote := fs.Bool("listen-remote", false, "allow --listen on a non-loopback address (the endpoint has no authentication: whoever reaches it drives the run)")
	wait := fs.Duration("wait", mcpgw.DefaultWait, "how long a call that asks waits for a human before the model is told its ticket")
	every := fs.Duration("progress-every", mcpgw.DefaultProgressEvery, "how often a waiting call sends a progress notification")
	elicit := fs.Bool("elicit", false, "offer tickets to the MCP client's user through elicitation (approve once / reject): whoever controls the MCP client can then approve the agent's calls")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("engine mcp serve: unexpected argument %q", fs.Arg(0))}
	}
	if *wait <= 0 || *every <= 0 {
		return usageError{"engine mcp serve: --wait and --progress-every must be positive durations"}
	}
	var ln net.Listener
	if *listen != "" {
		if err := mcpgw.CheckListen(*listen, *remote); err != nil {
			return usageError{err.Error()}
		}
		var err error
		if ln, err = net.Listen("tcp", *listen); err != nil {
			return err
		}
		defer ln.Close()
	}
	loc, err := filepath.Abs(*location)
	if err != nil {
		return err
	}
	log := logger(stderr)
	return cf.with(ctx, stderr, func(api engineAPI) error {
		g, err := mcpgw.New(ctx, mcpgw.Config{API: api, Agent: *agent, Location: loc, Project: *project, Session: *session,
			Wait: *wait, ProgressEvery: *every, Elicit: *elicit, Version: version(), Logger: log})
		if err != nil {
			return err
		}
		if ln != nil {
			fmt.Fprintf(stderr, "engine mcp serve: run %s, MCP over streamable HTTP at http://%s/\n", g.Run(), ln.Addr())
			return g.ServeHTTP(ctx, ln)
		}
		return g.ServeStdio(ctx, os.Stdin, nopWriteCloser{stdout})
	})
}

// nopWriteCloser is a writer the MCP transport may close without closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
