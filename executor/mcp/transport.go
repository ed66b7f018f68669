package mcp

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on what a stdio server's stderr may put in the log.
const (
	maxStderrLine  = 1024 // bytes of one line kept
	maxStderrLines = 200  // lines logged per connection; the rest are counted
)

// transport returns the SDK transport for s.
func transport(s Server, log *slog.Logger) sdk.Transport {
	if len(s.Command) > 0 {
		cmd := exec.Command(s.Command[0], s.Command[1:]...)
		cmd.Env = environ(s.Env)
		cmd.Dir = s.Dir
		cmd.Stderr = &stderrLog{log: log, server: s}
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	return &sdk.StreamableClientTransport{
		Endpoint:   s.URL,
		HTTPClient: &http.Client{Transport: &headerTransport{base: http.DefaultTransport, headers: s.Headers}},
		MaxRetries: 2,
	}
}

// environ is a stdio server's environment: env, plus PATH and HOME from the
// host when env does not set them (so `npx …` or `uvx …` can be found and
// cache in the user's home). Nothing else of the host's environment — its
// tokens and keys — reaches the server's process.
func environ(env map[string]string) []string {
	out := make([]string, 0, len(env)+2)
	for _, k := range []string{"PATH", "HOME"} {
		if _, set := env[k]; !set {
			if v, ok := os.LookupEnv(k); ok {
				out = append(out, k+"="+v)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// headerTransport sets the configured headers on every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

// String names the headers set, not their values.
func (t *headerTransport) String() string {
	return fmt.Sprintf("headers %v", slices.Sorted(maps.Keys(t.headers)))
}

// RoundTrip sends a copy of req carrying the headers.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// stderrLog writes a stdio server's stderr to the log at debug level, a
// line at a time, each line cut at maxStderrLine bytes and scrubbed of the
// server's secret values, at most maxStderrLines lines per connection.
type stderrLog struct {
	log     *slog.Logger
	server  Server
	mu      sync.Mutex
	partial []byte
	lines   int
}

// Write logs the complete lines in p; it never fails, so the server is
// never blocked on its stderr.
func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxStderrLine - len(w.partial)
			w.partial = append(w.partial, p[:min(len(p), max(room, 0))]...)
			break
		}
		room := maxStderrLine - len(w.partial)
		w.partial = append(w.partial, p[:min(i, max(room, 0))]...)
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *stderrLog) emit() {
	line := string(w.partial)
	w.partial = w.partial[:0]
	w.lines++
	switch {
	case w.lines <= maxStderrLines:
		w.log.Debug("mcp: server stderr", "server", w.server.Name, "line", w.server.scrub(line))
	case w.lines == maxStderrLines+1:
		w.log.Debug("mcp: server stderr: further lines are not logged", "server", w.server.Name)
	}
}

// connect opens a session to s. onChange is called (on the SDK's goroutine,
// so it must not block) when the server says its tool list changed.
func connect(ctx context.Context, s Server, log *slog.Logger, keepAlive time.Duration, onChange func()) (*sdk.ClientSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "stepgate", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { onChange() },
		KeepAlive:              keepAlive,
		Capabilities:           &sdk.ClientCapabilities{},
	})
	return c.Connect(ctx, transport(s, log), nil)
}
