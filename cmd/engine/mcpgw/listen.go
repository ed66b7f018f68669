package mcpgw

import (
	"fmt"
	"net"
	"strings"
)

// CheckListen refuses an HTTP listen address that is not loopback unless
// remote is set: the endpoint has no authentication of its own, and
// whoever reaches it drives the run's tools as its agent. A host name other
// than localhost is refused even with remote (it could resolve anywhere);
// an empty host is every address, so it needs remote too.
func CheckListen(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: want HOST:PORT: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	switch {
	case host != "" && ip == nil:
		return fmt.Errorf("--listen %q: want an IP address or localhost, not a host name", addr)
	case ip != nil && ip.IsLoopback():
		return nil
	case !remote:
		return fmt.Errorf("--listen %q is not a loopback address: the MCP endpoint has no authentication, so anyone who reaches it drives this run's tools; "+
			"listen on 127.0.0.1, or pass --listen-remote to accept it (put an authenticating proxy in front)", addr)
	}
	return nil
}
