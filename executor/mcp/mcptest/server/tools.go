package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testServer holds what the tools share: the calls file, and the secret
// the leak mode gives away.
type testServer struct {
	calls string
	leak  string
	// writer adds write_file (a server that writes files, to sandbox).
	writer bool
	mu     sync.Mutex
}

// record appends "<tool> <arguments>" to the calls file.
func (ts *testServer) record(tool string, args json.RawMessage) {
	if ts.calls == "" {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	f, err := os.OpenFile(ts.calls, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calls file:", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", tool, strings.Join(strings.Fields(string(args)), ""))
}

// onePixelPNG is a 1x1 transparent PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

func yes() *bool { return new(true) }

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

type tool struct {
	t *mcp.Tool
	h func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)
}

func obj(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(append([]string{}, required...))
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, req))
}

func (ts *testServer) tools(set string) []tool {
	v1 := []tool{
		{&mcp.Tool{Name: "echo", Description: "Echoes text.", InputSchema: obj(`"text":{"type":"string"}`, "text"),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
			func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
				return textResult(fmt.Sprint(a["text"])), nil
			}},
		{&mcp.Tool{Name: "danger_rm", Description: "Removes a path (pretends to).", InputSchema: obj(`"path":{"type":"string"}`, "path"),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: yes()}},
			func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
				return textResult(fmt.Sprintf("removed %v", a["path"])), nil
			}},
		{&mcp.Tool{Name: "big", Description: "Returns kib KiB of text.", InputSchema: obj(`"kib":{"type":"integer","minimum":0,"maximum":4096}`, "kib"),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
				n, _ := a["kib"].(float64)
				line := strings.Repeat("x", 63) + "\n"
				return textResult(strings.Repeat(line, int(n)*16)), nil
			}},
		{&mcp.Tool{Name: "image", Description: "Returns a 1x1 PNG.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				png, _ := base64.StdEncoding.DecodeString(onePixelPNG)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: png}}}, nil
			}},
		{&mcp.Tool{Name: "mixed", Description: "Returns every kind of content.", InputSchema: obj(``),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					&mcp.TextContent{Text: "hello"},
					&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFFwav")},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "note body"}},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.bin", MIMEType: "application/zip", Blob: []byte{1, 2, 3}}},
					&mcp.ResourceLink{URI: "https://example.invalid/doc", Name: "doc", MIMEType: "text/html", Description: "the docs"},
				}, StructuredContent: map[string]any{"n": 42}}, nil
			}},
		{&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				r := textResult("it failed on purpose")
				r.IsError = true
				return r, nil
			}},
		{&mcp.Tool{Name: "slow", Description: "Waits ms milliseconds.", InputSchema: obj(`"ms":{"type":"integer"}`, "ms")},
			func(ctx context.Context, a map[string]any) (*mcp.CallToolResult, error) {
				ms, _ := a["ms"].(float64)
				select {
				case <-time.After(time.Duration(ms) * time.Millisecond):
					return textResult("waited"), nil
				case <-ctx.Done():
					ts.record("slow-cancelled", nil)
					return nil, ctx.Err()
				}
			}},
		{&mcp.Tool{Name: "cwd", Description: "Returns its working directory.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				wd, err := os.Getwd()
				if err != nil {
					return nil, err
				}
				return textResult(wd), nil
			}},
		{&mcp.Tool{Name: "pid", Description: "Returns its process id.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return textResult(fmt.Sprint(os.Getpid())), nil
			}},
		{&mcp.Tool{Name: "environ", Description: "Lists its environment's variable names.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
				var names []string
				for _, kv := range os.Environ() {
					k, _, _ := strings.Cut(kv, "=")
					names = append(names, k)
				}
				slices.Sort(names)
				return textResult(strings.Join(names, "\n")), nil
			}},
	}
	if ts.leak != "" {
		v1 = append(v1, leakTools(ts.leak)...)
	}
	if ts.writer {
		v1 = append(v1, tool{&mcp.Tool{Name: "write_file", Description: "Writes text to path.", InputSchema: obj(`"path":{"type":"string"},"text":{"type":"string"}`, "path", "text")},
			func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
				if err := os.WriteFile(fmt.Sprint(a["path"]), []byte(fmt.Sprint(a["text"])), 0o600); err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
				}
				return textResult("wrote " + fmt.Sprint(a["path"])), nil
			}})
	}
	switch set {
	case "v2":
		out := slices.DeleteFunc(v1, func(t tool) bool { return t.t.Name == "danger_rm" })
		return append(out, tool{&mcp.Tool{Name: "added", Description: "Added in v2.", InputSchema: obj(``)},
			func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return textResult("added"), nil }})
	case "invalid":
		noop := func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return textResult("ran"), nil }
		return append(v1,
			tool{&mcp.Tool{Name: "bad_schema", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nonsense"}}}`)}, noop},
			tool{&mcp.Tool{Name: strings.Repeat("long", 20), InputSchema: obj(``)}, noop},
			tool{&mcp.Tool{Name: "dup.x", InputSchema: obj(``)}, noop},
			tool{&mcp.Tool{Name: "dup_x", InputSchema: obj(``)}, noop},
			tool{&mcp.Tool{Name: "dotted.name", Description: "Sanitised, kept.", InputSchema: obj(``)}, noop},
		)
	}
	return v1
}

// apply makes set the server's tool list; the SDK tells connected clients.
func (ts *testServer) apply(srv *mcp.Server, set string) {
	keep := map[string]bool{}
	for _, t := range ts.tools(set) {
		keep[t.t.Name] = true
	}
	var gone []string
	for _, s := range []string{"v1", "v2", "invalid"} {
		for _, t := range ts.tools(s) {
			if !keep[t.t.Name] {
				gone = append(gone, t.t.Name)
			}
		}
	}
	srv.RemoveTools(gone...)
	for _, t := range ts.tools(set) {
		h := t.h
		name := t.t.Name
		srv.AddTool(t.t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ts.record(name, req.Params.Arguments)
			var args map[string]any
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
			}
			return h(ctx, args)
		})
	}
}
