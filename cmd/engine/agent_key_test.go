package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
)

// agentUserFile writes the user's file (and a secrets file beside it) and
// returns the loader that reads it.
func agentUserFile(t *testing.T, text string) config.Loader {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secrets.yaml"), []byte("FILE_KEY: sk-from-the-secrets-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	uf := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(uf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Loader{UserFile: uf}
}

// The key engine agent sends: the environment's when set, else the user's
// file's secret reference (the environment, then secrets_file); the
// endpoint: --base-url, the resumed run's, the user's file's, the
// provider's own. The key goes only to an endpoint the user gave (the
// provider's own, --base-url, the user's file's): a resumed run whose log
// names another endpoint is refused while there is a key, not sent it.
func TestProviderKeyAndEndpoint(t *testing.T) {
	t.Setenv("STEPGATE_TEST_AGENT_KEY", "sk-from-a-secret-reference")
	file := "secrets_file: secrets.yaml\nproviders:\n" +
		"  openai: {api_key: \"secret://STEPGATE_TEST_AGENT_KEY\", base_url: \"https://llm.example/v1\"}\n" +
		"  anthropic: {api_key: \"secret://FILE_KEY\"}\n"
	withFile := agentUserFile(t, file)
	noFile := config.Loader{}
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name     string
		provider string
		runURL   string // the settings' base URL: the flag's on a new run, the log's (or the flag's) on a resume
		flagURL  string
		resume   bool
		l        config.Loader
		getenv   func(string) string
		key, url string
		err      error
	}{
		{name: "the environment wins over the file", provider: "openai", l: withFile, getenv: env("OPENAI_API_KEY", "sk-env"), key: "sk-env", url: "https://llm.example/v1"},
		{name: "the file's reference, from the environment", provider: "openai-responses", l: withFile, getenv: env(), key: "sk-from-a-secret-reference", url: "https://llm.example/v1"},
		{name: "the file's reference, from the secrets file", provider: "anthropic", l: withFile, getenv: env(), key: "sk-from-the-secrets-file"},
		{name: "--base-url wins over the file's", provider: "openai", runURL: "http://127.0.0.1:8000/v1", flagURL: "http://127.0.0.1:8000/v1", l: withFile, getenv: env(), key: "sk-from-a-secret-reference", url: "http://127.0.0.1:8000/v1"},
		{name: "no key, no endpoint", provider: "openai", l: noFile, getenv: env(), err: errNoKey},
		{name: "no key, a local server", provider: "openai", runURL: "http://127.0.0.1:8000/v1", flagURL: "http://127.0.0.1:8000/v1", l: noFile, getenv: env(), url: "http://127.0.0.1:8000/v1"},
		{name: "a resume keeps the run's own endpoint", provider: "openai", resume: true, l: withFile, getenv: env("OPENAI_API_KEY", "sk-env"), key: "sk-env"},
		{name: "a resume to the file's endpoint", provider: "openai", runURL: "https://llm.example/v1/", resume: true, l: withFile, getenv: env(), key: "sk-from-a-secret-reference", url: "https://llm.example/v1/"},
		{name: "a resume to the log's endpoint, confirmed by --base-url", provider: "openai", runURL: "https://other.example/v1", flagURL: "https://other.example/v1", resume: true, l: noFile, getenv: env("OPENAI_API_KEY", "sk-env"), key: "sk-env", url: "https://other.example/v1"},
		{name: "a resume to the log's endpoint with the environment's key", provider: "openai", runURL: "https://attacker.example/v1", resume: true, l: noFile, getenv: env("OPENAI_API_KEY", "sk-env"), err: errEndpointNotYours},
		{name: "a resume to the log's endpoint with the file's key", provider: "anthropic", runURL: "https://attacker.example", resume: true, l: withFile, getenv: env(), err: errEndpointNotYours},
		{name: "a resume to the log's endpoint without a key", provider: "openai", runURL: "http://127.0.0.1:9/v1", resume: true, l: noFile, getenv: env(), url: "http://127.0.0.1:9/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := events.ModelSettings{Provider: tc.provider, Model: "m", BaseURL: tc.runURL}
			key, err := providerKey(context.Background(), &set, tc.flagURL, tc.resume, tc.l, tc.getenv)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if err != nil {
				for _, k := range []string{"sk-env", "sk-from-a-secret-reference", "sk-from-the-secrets-file"} {
					if strings.Contains(err.Error(), k) {
						t.Errorf("the error shows the key: %v", err)
					}
				}
				return
			}
			if key != tc.key || set.BaseURL != tc.url {
				t.Errorf("key %q to %q, want %q to %q", key, set.BaseURL, tc.key, tc.url)
			}
		})
	}
}

// A reference that does not resolve is an error naming the key, the
// file's line and the reference; --base-url with credentials, or not a
// URL, is a usage error.
func TestProviderKeyRefusals(t *testing.T) {
	l := agentUserFile(t, "providers:\n  openai: {api_key: \"secret://STEPGATE_TEST_UNSET_KEY\"}\n")
	set := events.ModelSettings{Provider: "openai", Model: "m"}
	_, err := providerKey(context.Background(), &set, "", false, l, func(string) string { return "" })
	if !errors.Is(err, config.ErrSecret) || !strings.Contains(err.Error(), "providers.openai.api_key ("+l.UserFile+":2): secret://STEPGATE_TEST_UNSET_KEY: not set") {
		t.Errorf("an unresolved reference: %v", err)
	}
	for _, u := range []string{"https://user:sk-inline@llm.example/v1", "llm.example/v1", "ftp://h/v1"} {
		if err := checkBaseURL(u); !isUsage(err) || strings.Contains(err.Error(), "sk-inline") {
			t.Errorf("--base-url %s: %v, want a usage error without the credentials", u, err)
		}
	}
	if err := checkBaseURL("http://127.0.0.1:8000/v1"); err != nil {
		t.Errorf("a local server's URL: %v", err)
	}
}
