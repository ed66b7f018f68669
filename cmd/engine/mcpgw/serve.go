package mcpgw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/cmd/engine/httpguard"
)

// ServeStdio serves one MCP session over in and out (newline-delimited
// JSON-RPC) until the client closes in or ctx ends. Nothing but the
// protocol is written to out. A line that is not one JSON-RPC message, or
// is longer than [MaxStdioLine], is answered with a JSON-RPC error (-32700
// or -32600, id null) and skipped; the session goes on.
func (g *Gateway) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	w := &lockedWriter{w: out}
	r := struct {
		io.Reader
		io.Closer
	}{newLineFilter(in, w, MaxStdioLine, g.log), in}
	// The filter bounds every line, so the go-sdk's own frame bound is off.
	err := g.server.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: -1})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// ServeHTTP serves MCP's streamable HTTP transport on ln (at every path)
// until ctx ends; every MCP session on it drives the gateway's one run.
// The SDK's protection against DNS rebinding stays on (a request that
// reached a loopback address with a Host header naming another host is
// refused), and a browser's cross-origin request is refused too: a web
// page the user visits cannot drive the run. A slow client is bounded as
// [httpguard.Default] says: headers and bodies in time, connections in
// number (in all and per client address); streams are not cut.
func (g *Gateway) ServeHTTP(ctx context.Context, ln net.Listener) error {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server }, &mcp.StreamableHTTPOptions{Logger: g.log})
	limits := httpguard.Default()
	srv := httpguard.Server(http.NewCrossOriginProtection().Handler(h), limits, g.log)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(httpguard.Listen(ln, limits, g.log)) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve MCP over HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close() // calls still waiting for a human: their tickets stay
	}
	<-done
	return err
}
