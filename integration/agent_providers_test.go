package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/agent/fakeprovider"
)

// engine agent against each provider's real wire shapes (the fake
// provider server: Chat Completions, Responses, Messages), streaming and
// not: one turn writes a file and runs a command (parallel calls, one
// step), both results reach the model (its answer names them), and the
// run ends completed with that answer; the key the server demands is the
// environment's.
func TestAgentEachProvider(t *testing.T) {
	addr := freeAddr(t)
	url := "nats://" + addr
	serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1")
	for _, prov := range []string{fakeprovider.Chat, fakeprovider.Responses, fakeprovider.Messages} {
		for _, stream := range []string{"true", "false"} {
			t.Run(prov+"/stream="+stream, func(t *testing.T) {
				const key = "sk-fake-provider-key"
				fake := fakeprovider.New(fakeprovider.Config{APIKey: key,
					Script: fakeprovider.WriteAndBash("out.txt", "hello\n", "echo ran >> ran.log && echo appended")})
				root, stop, err := fake.Start(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(stop)
				base, env := root+"/v1", "OPENAI_API_KEY="+key
				if prov == fakeprovider.Messages {
					base, env = root, "ANTHROPIC_API_KEY="+key
				}
				ws := agentWorkspace(t, false)
				p := startAgent(t, []string{env}, "--nats", url, "--provider", prov, "--model", "fake-model", "--base-url", base,
					"--stream="+stream, "--location", ws, "write out.txt and run a command")
				if code := p.exit(t); code != 0 {
					t.Fatalf("exit %d\n%s", code, p.stderr.String())
				}
				end := p.await(t, "end")
				text, _ := end["text"].(string)
				if end["cause"] != "completed" || !strings.Contains(text, "write (ok)") || !strings.Contains(text, "bash (ok): appended") {
					t.Errorf("end %v: want completed, the answer naming both results", end)
				}
				if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "hello\n" {
					t.Errorf("out.txt %q", b)
				}
				if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 1 {
					t.Errorf("ran.log %q, want one line", got)
				}
				reqs := fake.Requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests, want 2 (one a turn)", len(reqs))
				}
				for _, r := range reqs {
					if r.Status != 200 || r.API != prov || r.Stream != (stream == "true") {
						t.Errorf("request %s stream %v: status %d", r.API, r.Stream, r.Status)
					}
				}
				run, _ := end["run"].(string)
				if r := showAgentRun(t, url, run); len(r.Turns) != 2 || r.Turns[0].Usage.InputTokens == 0 {
					t.Errorf("recorded turns %+v: want 2 with their usage", r.Turns)
				}
			})
		}
	}
}

// Anthropic requires a tool_result for every tool_use of a turn: after a
// turn whose write is allowed and whose bash the rules block, the next
// Messages request carries both results, in the turn's order, the blocked
// one marked is_error and saying it was blocked; the blocked command never
// ran.
func TestAgentAnthropicGetsEveryResultOfATurnWithABlockedCall(t *testing.T) {
	addr := freeAddr(t)
	url := "nats://" + addr
	serveArgs(t, "--data", t.TempDir(), "--listen", addr, "--host", "h1")
	const key = "sk-ant-fake-key"
	fake := fakeprovider.New(fakeprovider.Config{APIKey: key,
		Script: fakeprovider.WriteAndBash("out.txt", "hello\n", "echo ran >> ran.log")})
	root, stop, err := fake.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".stepgate", "config.yaml"), []byte("agents:\n  build:\n    permission:\n      bash:\n        \"*\": allow\n        \"echo *\": deny\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startAgent(t, []string{"ANTHROPIC_API_KEY=" + key}, "--nats", url, "--provider", fakeprovider.Messages,
		"--model", "fake-model", "--base-url", root, "--location", ws, "write out.txt and run a command")
	if code := p.exit(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	ex := reqs[1].Conversation.Exchanges
	if len(ex) != 1 || len(ex[0].Turn.Calls) != 2 {
		t.Fatalf("the second request's exchanges %+v: want the first turn with its two calls", ex)
	}
	res := ex[0].Results
	if len(res) != 2 {
		t.Fatalf("results %+v: want one for each tool_use", res)
	}
	calls := ex[0].Turn.Calls
	if res[0].CallID != calls[0].ID || res[0].IsError || res[1].CallID != calls[1].ID {
		t.Errorf("results %+v for calls %+v: want write's then bash's, write's not an error", res, calls)
	}
	if !res[1].IsError || !strings.Contains(strings.ToLower(res[1].Content), "block") {
		t.Errorf("the blocked call's result %+v: want an error saying it was blocked", res[1])
	}
	if got := fileLines(t, filepath.Join(ws, "ran.log")); len(got) != 0 {
		t.Errorf("the blocked command ran: %q", got)
	}
}
