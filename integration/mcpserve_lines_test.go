package integration

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// stdioAnswer is one JSON-RPC answer `engine mcp serve` writes on stdout.
type stdioAnswer struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// Over stdio a line that is not JSON, and a 40 MB line, are each answered
// with a JSON-RPC parse error (the long one naming the bound) and the
// session goes on: the next request is answered. (The go-sdk's transport
// ends the session on the first frame it cannot read.)
func TestMCPServeStdioBadLines(t *testing.T) {
	s := newGWSetup(t)
	cmd := exec.Command(engineBin, s.mcpArgs()...)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("engine mcp serve's stderr:\n%s", stderr.String())
		}
	})
	out := bufio.NewReader(outPipe)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatalf("write to engine mcp serve: %v", err)
		}
	}
	answer := func(what string) stdioAnswer {
		t.Helper()
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("%s: engine mcp serve ended (%v) instead of answering", what, err)
			}
			var a stdioAnswer
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatalf("%s: stdout line %q: %v", what, line, err)
			}
			if a.Method == "" { // not a notification
				return a
			}
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a := answer("initialize"); a.Error != nil || string(a.ID) != "1" {
		t.Fatalf("initialize: %+v", a)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	send("this is not JSON")
	if a := answer("a non-JSON line"); a.Error == nil || a.Error.Code != jsonrpc.CodeParseError || string(a.ID) != "null" {
		t.Errorf("a non-JSON line: %+v, want a -32700 parse error with id null", a)
	}

	const size = 40 << 20
	go func() { // the pipe takes the line as the server reads it
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"pad":"`+strings.Repeat("a", size)+`"}}`+"\n")
	}()
	if a := answer("a 40 MB line"); a.Error == nil || a.Error.Code != jsonrpc.CodeParseError || !strings.Contains(a.Error.Message, "longer than 16777216 bytes") {
		t.Errorf("a 40 MB line: %+v, want a -32700 parse error naming the bound", a)
	}

	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	a := answer("tools/list after the bad lines")
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if a.Error != nil || string(a.ID) != "3" || json.Unmarshal(a.Result, &list) != nil || len(list.Tools) == 0 {
		t.Errorf("tools/list after the bad lines: %+v, want the tools", a)
	}
}
