package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// engine agent --sandbox MODE is the floor of its embedded engine, with
// --listen (the engine also serves other processes) as without: the
// model's bash command runs in a user namespace of its own, not the
// engine's.
func TestAgentSandboxFloorOnItsEmbeddedEngine(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
		t.Skip("this host cannot sandbox (no Landlock or no user namespaces)")
	}
	own, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, listen := range []bool{false, true} {
		t.Run(map[bool]string{false: "data", true: "data+listen"}[listen], func(t *testing.T) {
			fake := fakeprovider.New(fakeprovider.Config{Script: fakeprovider.ByTurn(
				model.Turn{Calls: []model.ToolCall{{Name: "bash", Args: []byte(`{"command":"readlink /proc/self/ns/user"}`)}}},
				model.Turn{Text: "Done."},
			)})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			root, stop, err := fake.Start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			args := []string{"agent", "--data", t.TempDir(), "--sandbox", "workspace-write", "--provider", "openai",
				"--model", "fake-model", "--base-url", root + "/v1", "--location", t.TempDir(), "--stream=false", "which namespace"}
			if listen {
				args = append(args[:1], append([]string{"--listen", freePort(t)}, args[1:]...)...)
			}
			var stdout, stderr bytes.Buffer
			if err := run(ctx, args, &stdout, &stderr); err != nil {
				t.Fatalf("engine agent: %v\n%s", err, stderr.String())
			}
			reqs := fake.Requests()
			if len(reqs) != 2 || len(reqs[1].Conversation.Exchanges) != 1 || len(reqs[1].Conversation.Exchanges[0].Results) != 1 {
				t.Fatalf("requests %+v: want the bash result in the second", reqs)
			}
			got := reqs[1].Conversation.Exchanges[0].Results[0]
			if got.IsError || !strings.Contains(got.Content, "user:[") || strings.Contains(got.Content, own) {
				t.Errorf("bash ran in %q, the engine is in %q: want a user namespace of its own", got.Content, own)
			}
		})
	}
}
