// Package mcp connects the engine to MCP servers: it keeps one connection per
// server (stdio or streamable HTTP), turns the server's tools into
// [executor.Tool]s named mcp__<server>__<tool> whose calls go to the server,
// maps MCP results to executor results, and reconnects with backoff. It
// decides no permission and registers nothing: the host registers the tool
// sets it is handed (see [Client] and [ToolSet]).
//
// It depends on executor and descriptor only; configuration and secrets are
// resolved by the caller into a [Server] at the moment of connecting.
package mcp

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// Server is one MCP server as resolved for a connection: secrets already
// materialized into Env and Headers, and listed in Secrets. Exactly one of
// Command and URL is set. A Server never prints its Env or Headers values:
// String, Format and LogValue show their names only; and the secrets, in
// their common encodings too, are redacted from everything the server
// returns or prints (see [Redactor]).
type Server struct {
	// Name is the server's configured name, ^[A-Za-z][A-Za-z0-9_-]{0,31}$.
	Name string
	// Command is the argv of a stdio server.
	Command []string
	// Env is the environment of a stdio server's process: exactly these
	// variables, plus PATH and HOME from the host's environment when Env
	// does not set them. Nothing else of the host's environment is passed.
	Env map[string]string
	// Dir is the working directory of a stdio server's process; empty: the
	// host's.
	Dir string
	// URL is the endpoint of a streamable HTTP server.
	URL string
	// Headers are sent with every HTTP request to URL.
	Headers map[string]string
	// Trust says whether the server's tool annotations are believed (effect
	// classes from readOnlyHint and idempotentHint); an untrusted server's
	// tools are all side_effecting.
	Trust bool
	// Secrets are the resolved secrets among the Env and Headers values
	// (each secret, and each whole value that holds one): what the
	// connection's [Redactor] removes from the server's results, tool
	// listings, errors and stderr. A value configured as is, not by
	// reference, is configuration, not a secret.
	Secrets []string
	// Sandbox, when set and not Mode Off, is the sandbox a stdio server's
	// process runs in (see the executor/sandbox package): it is started
	// through the sandbox's helper, and not at all when the host cannot
	// enforce it (the connection fails with sandbox_unavailable). Env
	// reaches it as it is; of the host's environment only PATH and HOME
	// (see sandbox.WithEnv).
	Sandbox *sandbox.Policy
}

var serverName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`)

// Validate checks the name and that exactly one transport is configured.
func (s Server) Validate() error {
	if !serverName.MatchString(s.Name) {
		return fmt.Errorf("%w: %q", ErrInvalidServer, s.Name)
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("%w: %s has both a command and a url", ErrInvalidServer, s.Name)
	case len(s.Command) == 0 && s.URL == "":
		return fmt.Errorf("%w: %s has neither a command nor a url", ErrInvalidServer, s.Name)
	case len(s.Command) > 0 && s.Command[0] == "":
		return fmt.Errorf("%w: %s has an empty command", ErrInvalidServer, s.Name)
	case s.Sandbox != nil && s.URL != "":
		return fmt.Errorf("%w: %s is an HTTP server: only a stdio server's process runs in a sandbox", ErrInvalidServer, s.Name)
	}
	return nil
}

// String names the server and its transport; Env and Headers appear by name only.
func (s Server) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp server %s", s.Name)
	if len(s.Command) > 0 {
		fmt.Fprintf(&b, " (stdio %s)", s.scrub(s.Command[0]))
	} else {
		fmt.Fprintf(&b, " (http %s)", s.scrub(s.URL))
	}
	if len(s.Env) > 0 {
		fmt.Fprintf(&b, " env=[%s]", strings.Join(slices.Sorted(maps.Keys(s.Env)), " "))
	}
	if len(s.Headers) > 0 {
		fmt.Fprintf(&b, " headers=[%s]", strings.Join(slices.Sorted(maps.Keys(s.Headers)), " "))
	}
	if s.Trust {
		b.WriteString(" trusted")
	}
	if s.Sandbox != nil {
		fmt.Fprintf(&b, " sandbox=%s", s.Sandbox.Mode)
	}
	return b.String()
}

// Format prints String for every verb, %#v and %+v included.
func (s Server) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// GoString is String, so %#v shows no value either.
func (s Server) GoString() string { return s.String() }

// LogValue is what slog records: the name, the transport and the names of
// the variables and headers.
func (s Server) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("name", s.Name), slog.Bool("trust", s.Trust)}
	if len(s.Command) > 0 {
		attrs = append(attrs, slog.String("command", s.scrub(s.Command[0])))
	} else {
		attrs = append(attrs, slog.String("url", s.scrub(s.URL)))
	}
	attrs = append(attrs, slog.Any("env", slices.Sorted(maps.Keys(s.Env))), slog.Any("headers", slices.Sorted(maps.Keys(s.Headers))))
	return slog.GroupValue(attrs...)
}

// MarshalJSON writes what LogValue shows: names, never values, so a Server
// that ends up in a record or a response leaks nothing.
func (s Server) MarshalJSON() ([]byte, error) {
	v := struct {
		Name    string   `json:"name"`
		Command string   `json:"command,omitempty"`
		URL     string   `json:"url,omitempty"`
		Env     []string `json:"env,omitempty"`
		Headers []string `json:"headers,omitempty"`
		Trust   bool     `json:"trust"`
	}{Name: s.Name, URL: s.scrub(s.URL), Env: slices.Sorted(maps.Keys(s.Env)), Headers: slices.Sorted(maps.Keys(s.Headers)), Trust: s.Trust}
	if len(s.Command) > 0 {
		v.Command = s.scrub(s.Command[0])
	}
	return json.Marshal(v)
}

// Redactor is the redactor of s's secrets.
func (s Server) Redactor() *Redactor { return NewRedactor(s.Secrets) }

// scrub redacts s's secrets from text; for the rare printing of a Server
// (a connection keeps its Redactor).
func (s Server) scrub(text string) string {
	if len(s.Secrets) == 0 {
		return text
	}
	return s.Redactor().Redact(text)
}
