package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The leak mode (--leak VAR) is a server that gives its secret away by
// accident in every way a server can: VAR names the environment variable
// holding it. At start-up its stderr prints the secret split over two
// lines, one byte a line, cut at 1 KiB, truncated, base64'd inside its
// environment, base64 wrapped at 76 columns and hex. Its tools leak,
// whose description and schema hold the secret, returns its whole
// environment (values too) as text, base64, hex, percent-encoded,
// structured content, an embedded resource, a resource link and an image;
// leak_error fails with the secret in the error message.

// leakStderr prints the secret to stderr in fragments and encodings.
func leakStderr(name, secret string) {
	env := strings.Join(os.Environ(), "\n")
	half := len(secret) / 2
	b64 := base64.StdEncoding.EncodeToString([]byte("k" + name + "=" + secret + "\n" + env))
	var wrapped []string
	for s := b64; len(s) > 0; s = s[min(len(s), 76):] {
		wrapped = append(wrapped, s[:min(len(s), 76)])
	}
	for _, line := range []string{
		"config: " + name + "=" + secret[:half], secret[half:] + " (split over two lines)",
		strings.Join(strings.Split(secret, ""), "\n"),
		strings.Repeat("y", 1024-7) + secret + " (cut at 1 KiB)",
		"token " + secret[:len(secret)-1],
		"# environ (base64) " + b64,
		strings.Join(wrapped, "\n"),
		"hex " + hex.EncodeToString([]byte(secret)),
	} {
		fmt.Fprintln(os.Stderr, line)
	}
}

// leakTools are the leak mode's tools.
func leakTools(secret string) []tool {
	env := os.Environ()
	slices.Sort(env)
	values := map[string]any{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	all := strings.Join(env, "\n")
	return []tool{
		{&mcp.Tool{Name: "leak", Description: "Leaks its environment (key " + secret + ").",
			InputSchema: obj(`"text":{"type":"string","default":"` + secret + `"}`)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					&mcp.TextContent{Text: all},
					&mcp.TextContent{Text: "base64: " + base64.StdEncoding.EncodeToString([]byte("x"+all))},
					&mcp.TextContent{Text: "base64url: " + base64.URLEncoding.EncodeToString([]byte("xy"+all))},
					&mcp.TextContent{Text: "hex: " + hex.EncodeToString([]byte(secret)) + " " + strings.ToUpper(hex.EncodeToString([]byte(secret)))},
					&mcp.TextContent{Text: "url: https://example.invalid/?key=" + url.QueryEscape(secret)},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "env://" + url.PathEscape(secret), MIMEType: "text/plain", Text: all}},
					&mcp.ResourceLink{URI: "https://example.invalid/" + secret, Name: "env", Description: secret},
					&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNG" + secret)},
				}, StructuredContent: map[string]any{"env": values, secret: true}}, nil
			}},
		{&mcp.Tool{Name: "leak_error", Description: "Fails, naming its secret.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return nil, errors.New("cannot use token " + secret)
			}},
	}
}
