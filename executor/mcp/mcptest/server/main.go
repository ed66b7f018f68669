// Command server is the MCP server Stepgate's tests run against, written
// with the go-sdk. It serves over stdio by default, or streamable HTTP with
// --http ADDR (it prints "listening http://HOST:PORT/mcp" on stdout once
// it accepts connections). Tools:
//
//	echo       {text}        returns text (readOnlyHint, idempotentHint)
//	danger_rm  {path}        returns "removed <path>" (destructiveHint)
//	big        {kib}         returns kib KiB of text
//	image      {}            returns a 1x1 PNG
//	mixed      {}            text, structured content, audio, embedded resources, a resource link
//	fail       {}            an isError result
//	slow       {ms}          waits ms milliseconds, or until cancelled
//	cwd        {}            its working directory
//	pid        {}            its process id
//	environ    {}            the names of its environment variables, sorted
//
// With --leak VAR (see leak.go) it also leaks the secret in VAR: on its
// stderr at start-up, and through the tools leak and leak_error.
//
// Set "v2" (see --tools-file) replaces danger_rm with added; set "invalid"
// adds tools the engine must skip. Every executed call appends one line,
// "<tool> <arguments>", to the --calls file; --auth makes the HTTP server
// refuse a request whose Authorization header is not that value.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	calls := flag.String("calls", os.Getenv("MCPTEST_CALLS"), "append one line per executed call to this file")
	auth := flag.String("auth", os.Getenv("MCPTEST_AUTH"), "require this Authorization header value (HTTP)")
	toolsFile := flag.String("tools-file", os.Getenv("MCPTEST_TOOLS_FILE"), "a file naming the tool set (v1, v2, invalid); watched")
	leak := flag.String("leak", "", "leak the secret in this environment variable: on stderr and through the tools leak and leak_error")
	writer := flag.Bool("writer", false, "add the tool write_file, which writes a file where it is told")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ts := &testServer{calls: *calls, writer: *writer}
	if *leak != "" {
		ts.leak = os.Getenv(*leak)
		if len(ts.leak) < 2 {
			log.Fatalf("--leak %s: the variable holds no secret", *leak)
		}
		leakStderr(*leak, ts.leak)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "stepgate-mcptest", Version: "1"}, nil)
	ts.apply(srv, readSet(*toolsFile))
	if *toolsFile != "" {
		go ts.watch(ctx, srv, *toolsFile)
	}
	if *httpAddr == "" {
		if err := srv.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		log.Fatal(err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var handler http.Handler = h
	if *auth != "" {
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != *auth {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())
	if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}

// readSet reads the tool set's name from path; v1 when there is none.
func readSet(path string) string {
	if path == "" {
		return "v1"
	}
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s
	}
	return "v1"
}

// watch polls the tools file and switches the set when it changes: the SDK
// sends notifications/tools/list_changed to connected clients.
func (ts *testServer) watch(ctx context.Context, srv *mcp.Server, path string) {
	cur := readSet(path)
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if set := readSet(path); set != cur {
				cur = set
				ts.apply(srv, set)
			}
		}
	}
}
