package config

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// ResolvedServer is an MCP server with its secrets resolved, for the
// connection that uses them and nothing else: it is never to be stored.
// The resolved values are reached only through Env and Headers; every way
// of printing it — String, fmt's verbs (%v, %+v, %#v, %s, %q), slog and
// JSON — shows Config, whose values are the references as written.
type ResolvedServer struct {
	// Config is the server as configured, references unresolved.
	Config  MCPServer
	env     map[string]string
	headers map[string]string
	secrets []string
}

// ResolveServer resolves srv's env and headers into a ResolvedServer, at
// the moment of use. The error names the first reference that cannot be
// resolved and the key that holds it.
func (s *Secrets) ResolveServer(ctx context.Context, srv MCPServer) (ResolvedServer, error) {
	var file map[string]string
	out := ResolvedServer{Config: srv}
	var err error
	if out.env, err = s.resolveMap(ctx, srv.Name, "env", srv.Env, &file, &out.secrets); err != nil {
		return ResolvedServer{Config: srv}, err
	}
	if out.headers, err = s.resolveMap(ctx, srv.Name, "headers", srv.Headers, &file, &out.secrets); err != nil {
		return ResolvedServer{Config: srv}, err
	}
	return out, nil
}

// resolveMap resolves each value of m, in key order.
func (s *Secrets) resolveMap(ctx context.Context, server, what string, m map[string]string, file *map[string]string, found *[]string) (map[string]string, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := s.resolve(ctx, m[k], file, found)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: %s %s: %w", server, what, k, err)
		}
		out[k] = v
	}
	return out, nil
}

// Env is the resolved environment to add to a stdio server's (a copy).
func (r ResolvedServer) Env() map[string]string { return maps.Clone(r.env) }

// Headers are the resolved headers to send to an HTTP server (a copy).
func (r ResolvedServer) Headers() map[string]string { return maps.Clone(r.headers) }

// Secrets are the secrets resolved into Env and Headers: each reference's
// value, and each whole value that holds a reference and more text
// ("Bearer <token>"), in key order (a copy). Values written as is are not
// secrets: `engine config check` prints them.
func (r ResolvedServer) Secrets() []string { return slices.Clone(r.secrets) }

// String names the server and how it is reached, with its references as
// written.
func (r ResolvedServer) String() string { return describe(r.Config, false) }

// Format prints String for every verb; %+v and %#v also list env and
// headers, as references.
func (r ResolvedServer) Format(f fmt.State, verb rune) {
	s := describe(r.Config, f.Flag('+') || f.Flag('#'))
	if verb == 'q' {
		s = fmt.Sprintf("%q", s)
	}
	_, _ = f.Write([]byte(s))
}

// LogValue logs the server as configured, references unresolved.
func (r ResolvedServer) LogValue() slog.Value {
	c := r.Config
	attrs := []slog.Attr{slog.String("name", c.Name), slog.String("transport", c.Transport())}
	if c.URL != "" {
		attrs = append(attrs, slog.String("url", c.URL))
	}
	if len(c.Command) > 0 {
		attrs = append(attrs, slog.Any("command", c.Command))
	}
	if len(c.Env) > 0 {
		attrs = append(attrs, slog.Any("env", c.Env))
	}
	if len(c.Headers) > 0 {
		attrs = append(attrs, slog.Any("headers", c.Headers))
	}
	return slog.GroupValue(attrs...)
}

// MarshalJSON encodes Config, references unresolved.
func (r ResolvedServer) MarshalJSON() ([]byte, error) { return json.Marshal(r.Config) }

// describe is "mcp server NAME (stdio: argv...)" or "(http: URL)", and with
// full the env or headers as configured, in key order.
func describe(c MCPServer, full bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp server %s (%s: ", c.Name, c.Transport())
	if c.URL != "" {
		b.WriteString(c.URL)
	} else {
		b.WriteString(strings.Join(c.Command, " "))
	}
	b.WriteString(")")
	if full {
		for _, part := range []struct {
			what string
			m    map[string]string
		}{{"env", c.Env}, {"headers", c.Headers}} {
			for _, k := range slices.Sorted(maps.Keys(part.m)) {
				fmt.Fprintf(&b, " %s %s=%q", part.what, k, part.m[k])
			}
		}
	}
	return b.String()
}
