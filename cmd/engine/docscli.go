package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

//go:generate go run . docs-cli -o ../../docs/reference

// cliDoc collects the verbs' flag sets for the CLI reference: given as a
// verb's stderr, it receives the flag set when the verb is asked for -h
// (see helpUsage).
type cliDoc struct {
	sets map[string]*flag.FlagSet
}

func (c *cliDoc) Write(p []byte) (int, error) { return len(p), nil } // a verb's other output is not the reference's

func (c *cliDoc) add(name string, fs *flag.FlagSet) { c.sets[name] = fs }

// verbFlagSets are the names of the verbs and subcommands, in the help's
// order, and each one's flag set, as the verb itself defines it (asked for
// -h with a cliDoc as its stderr).
func verbFlagSets(ctx context.Context) ([]string, map[string]*flag.FlagSet) {
	c := &cliDoc{sets: map[string]*flag.FlagSet{}}
	var names []string
	for _, v := range verbs() {
		names = append(names, v.name)
	}
	for _, d := range subDocs() {
		names = append(names, d.name)
	}
	for _, n := range names {
		_ = run(ctx, append(strings.Fields(n), "-h"), io.Discard, c)
	}
	return names, c.sets
}

// cliPages is the CLI reference in Markdown, made from the verbs' own flag
// sets and help: an index (cli.md) and a page a task group
// (cli/<group>.md), by path under docs/reference.
func cliPages(ctx context.Context) map[string]string {
	names, sets := verbFlagSets(ctx)
	const generated = "Generated from the verbs' own flag sets by `go generate ./cmd/engine` (`engine docs-cli`); a\ntest fails when it is stale. `engine help VERB` prints the same.\n"
	pages := map[string]string{}
	var index strings.Builder
	index.WriteString("# The CLI\n\nEvery verb of `engine`, grouped by task, with a page a group. " + generated)
	for _, g := range groups() {
		file := "cli/" + slug(g) + ".md"
		fmt.Fprintf(&index, "\n## [%s](%s)\n\n", g, file)
		var b strings.Builder
		fmt.Fprintf(&b, "# The CLI: %s\n\nThe verbs of this group, their flags and an example. %s", strings.ToLower(g), generated)
		b.WriteString("The flags that reach an engine are listed once, in [connection flags](../cli.md#connection-flags).\n")
		for _, n := range names {
			d, _ := docOf(n)
			if d.group != g {
				continue
			}
			fmt.Fprintf(&index, "- [engine %s](%s#%s): %s\n", d.name, file, slug("engine "+d.name), d.summary)
			writeVerb(&b, d, sets[n])
		}
		pages[file] = b.String()
	}
	index.WriteString("\n## Connection flags\n\nThe flags every client verb takes to reach an engine; `engine help connection` prints them.\n\n| flag | default | |\n|---|---|---|\n")
	fs := flag.NewFlagSet("connection", flag.ContinueOnError)
	var f connFlags
	f.registerClient(fs)
	fs.VisitAll(func(f *flag.Flag) { writeFlagRow(&index, f) })
	pages["cli.md"] = index.String()
	return pages
}

// writeVerb writes one verb's section: purpose, usage, flags, example.
func writeVerb(b *strings.Builder, d verbDoc, fs *flag.FlagSet) {
	fmt.Fprintf(b, "\n## engine %s\n\n%s.\n\n```\n%s\n```\n", d.name, upperFirst(d.summary), d.usage)
	if fs != nil {
		own, conn := splitFlags(fs)
		if len(own) > 0 {
			b.WriteString("\n| flag | default | |\n|---|---|---|\n")
			for _, f := range own {
				writeFlagRow(b, f)
			}
		}
		if len(conn) > 0 {
			fmt.Fprintf(b, "\nConnection flags: `--%s`.\n", strings.Join(conn, "`, `--"))
		}
	}
	if d.example != "" {
		fmt.Fprintf(b, "\nExample:\n\n```sh\n%s\n```\n", d.example)
	}
}

// writeFlagRow writes one flag as a row of a Markdown table.
func writeFlagRow(b *strings.Builder, f *flag.Flag) {
	head, text, def := flagParts(f)
	fmt.Fprintf(b, "| `%s` | %s | %s |\n", head, cell(def), cell(text))
}

// slug is a heading's anchor, and a group's file name.
func slug(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// cell is s fit for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// runDocsCLI is the hidden verb `engine docs-cli -o DIR`: writes the CLI
// reference's pages under DIR (docs/reference).
func runDocsCLI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("docs-cli", stderr)
	out := fs.String("o", "", "the reference's directory (docs/reference)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError{"engine docs-cli: -o DIR is required"}
	}
	for name, page := range cliPages(ctx) {
		path := filepath.Join(*out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			return err
		}
	}
	return nil
}
