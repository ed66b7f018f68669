package main

import (
	"context"
	"io"
)

// mcpSubcommands are the subcommands of `engine mcp`.
func mcpSubcommands() map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
		"ls": runMCPList,
	}
}

// runMCP is `engine mcp SUBCOMMAND`.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if sub, ok := mcpSubcommands()[args[0]]; ok {
			return sub(ctx, args[1:], stdout, stderr)
		}
	}
	return usageError{"engine mcp: want a subcommand: ls"}
}
