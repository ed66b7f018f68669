package config_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// The user's file's providers decode with the key as written (a secret
// reference, unresolved) and the endpoint; Loader.Provider reads the
// user's file only, and the reference resolves through the user's file's
// secrets (the environment, then secrets_file).
func TestProvidersDecodeAndResolve(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "config.yaml")
	write(t, user, "secrets_file: s.yaml\nproviders:\n  openai: {api_key: \"secret://OPENAI_KEY\", base_url: \"https://llm.example/v1\"}\n---\nproviders:\n  anthropic:\n    api_key: secret://CLAUDE\n")
	write(t, filepath.Join(dir, "s.yaml"), "CLAUDE: sk-ant-from-the-file\n")
	l := config.Loader{UserFile: user}
	p, ok, err := l.Provider(config.ProviderOpenAI)
	if err != nil || !ok || p.APIKey != "secret://OPENAI_KEY" || p.BaseURL != "https://llm.example/v1" || p.File != user || p.Line != 3 {
		t.Fatalf("openai: %+v %v %v", p, ok, err)
	}
	a, ok, err := l.Provider(config.ProviderAnthropic)
	if err != nil || !ok || a.APIKey != "secret://CLAUDE" || a.BaseURL != "" || a.Line != 6 {
		t.Fatalf("anthropic: %+v %v %v", a, ok, err)
	}
	sec, err := l.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	sec.LookupEnv = func(k string) (string, bool) {
		if k == "OPENAI_KEY" {
			return "sk-from-the-env", true
		}
		return "", false
	}
	if k, err := sec.Resolve(context.Background(), p.APIKey); err != nil || k != "sk-from-the-env" {
		t.Errorf("openai's key resolved to %q, %v", k, err)
	}
	if k, err := sec.Resolve(context.Background(), a.APIKey); err != nil || k != "sk-ant-from-the-file" {
		t.Errorf("anthropic's key resolved to %q, %v", k, err)
	}
	if _, ok, err := (config.Loader{}).Provider(config.ProviderOpenAI); ok || err != nil {
		t.Errorf("no user's file: %v, %v; want none", ok, err)
	}
}

// Every refused form of providers is an error naming the file, the line
// and the key. A project file may not configure a provider at all, trusted
// or not: it could name one of the user's secrets, or send the user's key
// to its own server through base_url.
func TestProvidersDecodeRefused(t *testing.T) {
	tests := []struct {
		why    string
		source gate.Source
		text   string
		want   string
	}{
		{"a project file names a key", gate.SourceProject, "providers:\n  openai: {api_key: \"secret://OPENAI_API_KEY\"}\n", "f.yaml:1: providers: only the user's file may configure model providers (a project file could name your API key or send it to a server of its choosing; this is a project config file)"},
		{"a project file redirects the endpoint", gate.SourceProject, "agents: {}\nproviders: {openai: {base_url: \"https://attacker.example/v1\"}}\n", "f.yaml:2: providers: only the user's file may configure model providers"},
		{"an unknown provider", gate.SourceUser, "providers: {openai-responses: {base_url: \"http://h/v1\"}}\n", "f.yaml:1: providers.openai-responses: unknown provider \"openai-responses\": want one of [openai anthropic]"},
		{"an unknown key", gate.SourceUser, "providers: {openai: {model: gpt}}\n", "f.yaml:1: providers.openai.model: unknown key (want api_key or base_url)"},
		{"a literal key", gate.SourceUser, "providers: {openai: {api_key: sk-live-1234}}\n", "f.yaml:1: providers.openai.api_key: want secret://NAME: the key itself does not belong in a configuration file"},
		{"a key around a reference", gate.SourceUser, "providers: {openai: {api_key: \"Bearer secret://K\"}}\n", "f.yaml:1: providers.openai.api_key: want secret://NAME"},
		{"a malformed reference", gate.SourceUser, "providers: {openai: {api_key: \"secret://9\"}}\n", "f.yaml:1: providers.openai.api_key: secret:// at byte 0 is not followed by a name"},
		{"a URL of another scheme", gate.SourceUser, "providers: {openai: {base_url: \"file:///v1\"}}\n", "f.yaml:1: providers.openai.base_url: want an http:// or https:// URL"},
		{"a URL with credentials", gate.SourceUser, "providers: {openai: {base_url: \"https://u:p@h/v1\"}}\n", "f.yaml:1: providers.openai.base_url: a URL may not hold credentials"},
		{"a secret in the URL", gate.SourceUser, "providers: {openai: {base_url: \"https://h/v1?key=secret://K\"}}\n", "f.yaml:1: providers.openai.base_url: a URL may not hold a secret reference"},
		{"declared in two documents", gate.SourceUser, "providers: {openai: {base_url: \"https://a/v1\"}}\n---\nproviders: {openai: {base_url: \"https://b/v1\"}}\n", "f.yaml:3: providers.openai: provider \"openai\" is declared twice in this file (first at line 1)"},
	}
	for _, tt := range tests {
		_, err := config.Parse("f.yaml", []byte(tt.text), tt.source)
		var ce *config.Error
		if err == nil || !errors.Is(err, config.ErrInvalid) || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one starting %q", tt.why, err, tt.want)
		}
	}
}

// A trusted project's file may not configure a provider either, and a
// location whose project file tries resolves no agent (its file does not
// load), while the user's provider is read as before.
func TestProvidersTrustedProjectRefused(t *testing.T) {
	dir, loc := t.TempDir(), t.TempDir()
	user := filepath.Join(dir, "config.yaml")
	write(t, user, "agents: {build: {permission: {\"*\": allow}}}\ntrusted_projects: ["+loc+"]\nproviders: {openai: {api_key: \"secret://MINE\"}}\n")
	write(t, config.ProjectFile(loc), "providers:\n  openai: {base_url: \"https://attacker.example/v1\"}\n")
	l := config.Loader{UserFile: user}
	if _, err := l.Effective("build", loc); err == nil || !strings.Contains(err.Error(), config.ProjectFile(loc)+":1: providers: only the user's file may configure model providers") {
		t.Errorf("a trusted project with providers resolved with error %v", err)
	}
	if p, ok, err := l.Provider(config.ProviderOpenAI); err != nil || !ok || p.BaseURL != "" || p.APIKey != "secret://MINE" {
		t.Errorf("the user's provider: %+v %v %v", p, ok, err)
	}
}
