package mcp

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidServer is wrapped when a Server's name or transport is not usable.
	ErrInvalidServer = errors.New("invalid mcp server")
	// ErrUnavailable is wrapped when a server cannot be reached: not
	// connected, its process gone, its endpoint refusing.
	ErrUnavailable = errors.New("mcp server unavailable")
)

// Unavailable is the model-visible text of a call to a server that is down
// or whose connection failed during the call: "MCP server <name> is
// unavailable: <why>". why has been scrubbed of every secret value.
func Unavailable(server, why string) string {
	return fmt.Sprintf("MCP server %s is unavailable: %s", server, why)
}
