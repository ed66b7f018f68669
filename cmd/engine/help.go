package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// verbDoc is what the help says of a verb or a subcommand: its task group,
// purpose, usage line and an example.
type verbDoc struct {
	name, group, summary, usage, example string
}

// groups are the verbs' task groups, in the order `engine` lists them.
func groups() []string {
	return []string{"Run an engine", "Drive runs", "Confirmations", "Replay and debugging", "MCP", "Operations"}
}

// subDocs are the subcommands that parse flags of their own (engine mcp
// serve -h), each documented like a verb.
func subDocs() []verbDoc {
	return []verbDoc{
		{"mcp serve", "MCP", "serve one run as an MCP server (stdio, or streamable HTTP with --listen): each tools/call is a step through the gate", "engine mcp serve [--location DIR] [--agent NAME] [--listen HOST:PORT] [flags]",
			`engine mcp serve --nats nats://127.0.0.1:4222 --location ~/project`},
		{"mcp ls", "MCP", "the location's MCP servers: their state, tools and effect classes, and the tools skipped", "engine mcp ls [--location DIR] [flags]", `engine mcp ls --location ~/project`},
		{"config check", "Operations", "validate the configuration of a location and print the effective rules and MCP servers", "engine config check [--location DIR] [flags]", `engine config check --location ~/project`},
		{"config push", "Operations", "make a user file the fleet's policy (validated first, refused whole on any error)", "engine config push FILE --nats URL [flags]", `engine config push ~/.config/stepgate/config.yaml --nats nats://127.0.0.1:4222`},
		{"config show", "Operations", "print the fleet's policy and its version", "engine config show --nats URL [flags]", `engine config show --nats nats://127.0.0.1:4222`},
	}
}

// docOf is the help of the verb or subcommand name ("approve", "mcp serve").
func docOf(name string) (verbDoc, bool) {
	for _, v := range verbs() {
		if v.name == name {
			return v.verbDoc, true
		}
	}
	for _, d := range subDocs() {
		if d.name == name {
			return d, true
		}
	}
	return verbDoc{}, false
}

// connFlagNames are the connection flags every client verb shares: the
// help lists them once (engine help connection), not on every verb.
func connFlagNames() []string {
	return []string{"data", "nats", "user", "password-file", "password", "creds", "tls-cert", "tls-key", "tls-ca", "inbox-prefix", "timeout"}
}

// usage prints the verbs grouped by task.
func usage(w io.Writer) {
	fmt.Fprintln(w, "Stepgate's engine: gates, records and resumes AI agents' tool calls.")
	fmt.Fprintln(w, "usage: engine VERB [flags]      engine help VERB (or engine VERB -h) for its flags and an example")
	for _, g := range groups() {
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, v := range verbs() {
			if v.group == g {
				fmt.Fprintf(w, "  %-10s %s\n", v.name, v.summary)
			}
		}
	}
	fmt.Fprintln(w, "\nengine help connection: the flags that reach an engine (--data, --nats, credentials, TLS)")
}

// helpUsage is the flag set's Usage: the verb's purpose, usage line, own
// flags, the connection flags by name, and an example.
func helpUsage(w io.Writer, name string, fs *flag.FlagSet) func() {
	return func() {
		if c, ok := w.(*cliDoc); ok { // the reference's generator collects the flag set instead
			c.add(name, fs)
			return
		}
		d, ok := docOf(name)
		if !ok {
			fmt.Fprintf(w, "usage: engine %s [flags]\n", name)
			fs.PrintDefaults()
			return
		}
		fmt.Fprintf(w, "engine %s: %s\n\nusage: %s\n", d.name, d.summary, d.usage)
		own, conn := splitFlags(fs)
		if len(own) > 0 {
			fmt.Fprintln(w, "\nflags:")
			for _, f := range own {
				printFlag(w, f)
			}
		}
		if len(conn) > 0 {
			fmt.Fprintf(w, "\nconnection flags: --%s (engine help connection)\n", strings.Join(conn, ", --"))
		}
		if d.example != "" {
			fmt.Fprintf(w, "\nexample:\n  %s\n", d.example)
		}
	}
}

// splitFlags is fs's own flags and the names of the connection flags it has.
func splitFlags(fs *flag.FlagSet) (own []*flag.Flag, conn []string) {
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(connFlagNames(), f.Name) {
			conn = append(conn, f.Name)
		} else {
			own = append(own, f)
		}
	})
	return own, conn
}

// flagParts is how the help and the CLI reference name a flag: "--name
// TYPE", its usage, and its default ("" when it is the zero value, which
// the flag package does not print either).
func flagParts(f *flag.Flag) (head, usage, def string) {
	kind, usage := flag.UnquoteUsage(f)
	head = "--" + f.Name
	if kind != "" {
		head += " " + kind
	}
	switch f.DefValue {
	case "", "false", "0", "0s":
	default:
		def = f.DefValue
	}
	return head, usage, def
}

// printFlag prints one flag as the flag package does: name, value type,
// usage and default.
func printFlag(w io.Writer, f *flag.Flag) {
	head, text, def := flagParts(f)
	fmt.Fprintf(w, "  %s\n    \t%s", head, strings.ReplaceAll(text, "\n", "\n    \t"))
	if def != "" {
		fmt.Fprintf(w, " (default %q)", def)
	}
	fmt.Fprintln(w)
}

// helpConnection prints the connection flags in full.
func helpConnection(w io.Writer) {
	fs := flag.NewFlagSet("connection", flag.ContinueOnError)
	var f connFlags
	f.registerClient(fs)
	fmt.Fprintln(w, "The flags every client verb takes to reach an engine. Without --nats a verb uses an embedded")
	fmt.Fprintln(w, "engine on --data (only run, mcp serve and mcp ls may make one there); with --nats it talks to")
	fmt.Fprintln(w, "served engines over NATS. A password never needs to be in argv: --password-file, or the environment.")
	fmt.Fprintln(w)
	fs.VisitAll(func(f *flag.Flag) { printFlag(w, f) })
}

// nearest is the candidate closest to s, when it is close enough to be
// what was meant (an edit distance of at most 2, or a prefix).
func nearest(s string, candidates []string) (string, bool) {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := distance(s, c); d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD <= 2 && len(s) > 1 {
		return best, true
	}
	for _, c := range candidates {
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			return c, true
		}
	}
	return "", false
}

// distance is the Levenshtein distance of a and b, in bytes (names are ASCII).
func distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
