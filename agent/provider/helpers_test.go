package provider_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
)

const testKey = "sk-test-4f9d2c7e1b"

var providers = []string{provider.OpenAI, provider.OpenAIResponses, provider.Anthropic}

// each runs f for every provider, streaming and not.
func each(t *testing.T, f func(t *testing.T, name string, stream bool)) {
	for _, name := range providers {
		for _, stream := range []bool{false, true} {
			label := name + "/non-stream"
			if stream {
				label = name + "/stream"
			}
			t.Run(label, func(t *testing.T) { f(t, name, stream) })
		}
	}
}

// serve starts a fake with script and the test key on loopback.
func serve(t *testing.T, script fakeprovider.Script) (*fakeprovider.Server, string) {
	t.Helper()
	srv := fakeprovider.New(fakeprovider.Config{APIKey: testKey, Script: script})
	url, stop, err := srv.Start(context.Background())
	if err != nil {
		t.Fatalf("start fake provider: %v", err)
	}
	t.Cleanup(stop)
	return srv, url
}

// dial is the provider called name against the fake at url, with key.
func dial(t *testing.T, name, url, key string) model.Provider {
	t.Helper()
	base := url
	if name != provider.Anthropic {
		base = url + "/v1"
	}
	p, err := provider.New(name, provider.Options{BaseURL: base, APIKey: key})
	if err != nil {
		t.Fatalf("provider.New(%s): %v", name, err)
	}
	return p
}

var tools = []model.Tool{
	{Name: "write", Description: "Write a file", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	{Name: "bash", Description: "Run a command", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)},
}

// normal is v as plain JSON values, for comparing JSON regardless of key
// order and spacing.
func normal(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return v
}
