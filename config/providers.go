package config

import (
	"fmt"
	"slices"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// The model providers the user's file may configure (providers.NAME):
// openai is the OpenAI API, both Chat Completions (engine agent --provider
// openai) and Responses (openai-responses); anthropic is Messages.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// providerNames are the names providers: accepts.
var providerNames = []string{ProviderOpenAI, ProviderAnthropic}

// Provider is the user's file's word on one model provider engine agent
// speaks (providers.NAME). Only the user's file declares providers: a
// project file that names one is refused, since it could name a key of
// the user's or send it to a server of its choosing.
type Provider struct {
	// Name is openai or anthropic.
	Name string `json:"name"`
	// APIKey is the key as written: a secret://NAME reference, resolved
	// with [Secrets.Resolve] at the moment of use, never stored resolved;
	// "" when the entry names none.
	APIKey string `json:"-"`
	// BaseURL is the provider's endpoint (an OpenAI-compatible server, a
	// proxy); "" for the provider's own.
	BaseURL string `json:"base_url,omitempty"`
	// File and Line are where the entry is declared, for errors.
	File string `json:"file"`
	Line int    `json:"line"`
}

// Provider is the user's file's entry for provider name (openai or
// anthropic); ok false when there is no user's file or it has none.
// Project files are not read: they may not declare any.
func (l Loader) Provider(name string) (p Provider, ok bool, err error) {
	f, err := l.userLayer()
	if err != nil || f == nil {
		return Provider{}, false, err
	}
	for _, p := range f.providers {
		if p.Name == name {
			return p, true, nil
		}
	}
	return Provider{}, false, nil
}

// providersSection is providers: {NAME: {api_key, base_url}}. The user's
// file only.
type providersSection []Provider

// providerEntry is providers.NAME: the key and the endpoint engine agent
// uses for the provider (openai: Chat Completions and Responses;
// anthropic: Messages).
type providerEntry struct {
	// The API key, as secret://NAME (the environment variable NAME, or NAME
	// in secrets_file); OPENAI_API_KEY or ANTHROPIC_API_KEY, when set, wins.
	APIKey providerKey `yaml:"api_key"`
	// The provider's endpoint, e.g. an OpenAI-compatible server; the key
	// is sent only to this URL, the provider's own, or engine agent's
	// --base-url.
	BaseURL providerURL `yaml:"base_url"`
}

func (ps *providersSection) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may configure model providers (a project file could name your API key or send it to a server of its choosing; this is a %s file)", s.source.Label())
	}
	return entries(s, n, func(name string, kn, vn ast.Node) error {
		ss := s.child(name, kn)
		if !slices.Contains(providerNames, name) {
			return ss.failKey("unknown provider %q: want one of %v (openai is Chat Completions and Responses)", name, providerNames)
		}
		if slices.ContainsFunc(*ps, func(p Provider) bool { return p.Name == name }) {
			return ss.failKey("provider %q is declared twice", name)
		}
		var e providerEntry
		if err := fields(ss, vn, &e, "unknown key (want api_key or base_url)"); err != nil {
			return err
		}
		*ps = append(*ps, Provider{Name: name, APIKey: e.APIKey.text, BaseURL: e.BaseURL.text, File: s.file, Line: line(kn)})
		return nil
	})
}

// providerKey is an API key: exactly one secret://NAME reference (the key
// itself does not belong in a file).
type providerKey struct{ plain }

func (k *providerKey) decode(s state, n ast.Node) error {
	const want = "want secret://NAME: the key itself does not belong in a configuration file (secret://NAME is the environment variable NAME, or NAME in secrets_file)"
	if err := k.read(s, n, want); err != nil {
		return err
	}
	refs, err := SecretRefs(k.text)
	if err != nil {
		return s.fail(n, "%v", err)
	}
	if len(refs) != 1 || refs[0].Start != 0 || refs[0].End != len(k.text) {
		return s.fail(n, "%s", want)
	}
	return nil
}

// providerURL is a provider's endpoint: http or https, a host, no
// credentials, no secret reference.
type providerURL struct{ plain }

func (u *providerURL) decode(s state, n ast.Node) error {
	if err := u.read(s, n, "want a URL"); err != nil {
		return err
	}
	return checkHTTPURL(s, n, u.text, true, "the key is api_key", "the key is api_key")
}

// applyProviders adds a document's providers to f; a provider declared in
// two documents of one file is an error at the second.
func (f *File) applyProviders(ps providersSection) error {
	for _, p := range ps {
		for _, prev := range f.providers {
			if prev.Name == p.Name {
				return &Error{File: f.Path, Line: p.Line, Key: "providers." + p.Name, Msg: fmt.Sprintf("provider %q is declared twice in this file (first at line %d)", p.Name, prev.Line)}
			}
		}
		f.providers = append(f.providers, p)
	}
	return nil
}
