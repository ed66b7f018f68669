package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// transport returns the SDK transport for s; a stdio server's stderr is
// logged through red.
func transport(s Server, log *slog.Logger, red *Redactor) sdk.Transport {
	if len(s.Command) > 0 && s.Sandbox != nil && s.Sandbox.Mode != sandbox.Off && s.Sandbox.Mode != "" {
		return &sandboxTransport{s: s, log: log, red: red}
	}
	if len(s.Command) > 0 {
		cmd := exec.Command(s.Command[0], s.Command[1:]...)
		cmd.Env = environ(s.Env)
		cmd.Dir = s.Dir
		cmd.Stderr = newStderrLog(log, s.Name, red)
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
	return append(hostPathHome(env), configured(env)...)
}

// hostPathHome is PATH and HOME from the host's environment, those env
// does not set.
func hostPathHome(env map[string]string) []string {
	var out []string
	for _, k := range []string{"PATH", "HOME"} {
		if _, set := env[k]; !set {
			if v, ok := os.LookupEnv(k); ok {
				out = append(out, k+"="+v)
			}
		}
	}
	return out
}

// configured is env as NAME=value, sorted by name.
func configured(env map[string]string) []string {
	out := make([]string, 0, len(env))
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

// connect opens a session to s. onChange is called (on the SDK's goroutine,
// so it must not block) when the server says its tool list changed.
func connect(ctx context.Context, s Server, red *Redactor, log *slog.Logger, keepAlive time.Duration, onChange func()) (*sdk.ClientSession, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "stepgate", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { onChange() },
		KeepAlive:              keepAlive,
		Capabilities:           &sdk.ClientCapabilities{},
	})
	return c.Connect(ctx, transport(s, log, red), nil)
}
