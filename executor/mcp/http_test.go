package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/executor/mcp"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
)

const token = "s3cret-token-value-1234"

func TestHTTPServerChecksTheAuthorizationHeader(t *testing.T) {
	calls := tempFile(t, "calls", "")
	h := testServer.StartHTTP(t, "", mcptest.Flags{Auth: "Bearer " + token, Calls: calls})

	// Without the header the server refuses; the error names no secret.
	bad := start(t, mcp.Server{Name: "noauth", URL: h.URL, Headers: map[string]string{"Authorization": "Bearer wrong-" + token}})
	down, _ := bad.await(t, 0, func(s mcp.ToolSet) bool { return s.Phase == mcp.Down })
	if down.Err == nil || strings.Contains(down.Err.Error(), token) || strings.Contains(bad.c.State().LastError, token) {
		t.Fatalf("refused connection: %v / %q", down.Err, bad.c.State().LastError)
	}
	t.Logf("refused: %v", down.Err)

	r := start(t, mcp.Server{Name: "web", URL: h.URL, Headers: map[string]string{"Authorization": "Bearer " + token}})
	set, _ := r.await(t, 0, ready)
	if res := call(t, context.Background(), set, "mcp__web__echo", `{"text":"over http"}`); res.IsError || res.Text() != "over http" {
		t.Fatalf("echo over HTTP: %+v", res)
	}
	if got := readLines(t, calls); len(got) != 1 {
		t.Fatalf("calls %q", got)
	}
}

func TestHTTPServerKilledThenBack(t *testing.T) {
	ctx := context.Background()
	h := testServer.StartHTTP(t, "", mcptest.Flags{})
	r := start(t, mcp.Server{Name: "web", URL: h.URL})
	set, next := r.await(t, 0, ready)
	h.Kill()
	res := call(t, ctx, set, "mcp__web__echo", `{"text":"x"}`)
	if !res.IsError || !strings.HasPrefix(res.Text(), "MCP server web is unavailable: ") {
		t.Fatalf("call to a killed server: %+v", res)
	}
	t.Logf("the model reads: %s", res.Text())
	// The failed call drops the connection at once (the SDK's own retries
	// would take seconds): the client is down and reconnecting.
	if _, next = r.awaitWithin(t, 3*time.Second, next, func(s mcp.ToolSet) bool { return s.Phase == mcp.Down }); r.c.State().Phase == mcp.Ready {
		t.Fatal("ready while the server is gone")
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(h.URL, "http://"), "/mcp")
	testServer.StartHTTP(t, addr, mcptest.Flags{})
	again, _ := r.await(t, next, ready)
	if again.Scope != set.Scope {
		t.Fatalf("scope changed across the restart: %s → %s", set.Scope, again.Scope)
	}
	if res := call(t, ctx, set, "mcp__web__echo", `{"text":"back"}`); res.IsError || res.Text() != "back" {
		t.Fatalf("after the restart: %+v", res)
	}
}

func TestServerNeverPrintsItsSecrets(t *testing.T) {
	s := mcp.Server{Name: "s", URL: "https://h.invalid/mcp?key=" + token, Headers: map[string]string{"Authorization": "Bearer " + token},
		Env: map[string]string{"API_KEY": token}, Secrets: []string{token, "Bearer " + token}}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("connect", "server", s)
	js, err := json.Marshal(map[string]any{"s": s})
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{s.String(), fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s), fmt.Sprint([]mcp.Server{s}), logged.String(), string(js)} {
		if strings.Contains(out, token) {
			t.Errorf("printed the secret: %s", out)
		}
		if !strings.Contains(out, "Authorization") && !strings.Contains(out, "headers=[Authorization]") {
			t.Errorf("the header's name is missing: %s", out)
		}
	}
}
