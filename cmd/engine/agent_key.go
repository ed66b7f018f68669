package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
)

// knownProvider reports whether name is a provider engine agent speaks.
func knownProvider(name string) bool {
	switch name {
	case "openai", "openai-responses", "anthropic":
		return true
	}
	return false
}

// Why engine agent has no key to send, or will not send the one it has.
var (
	errNoKey            = errors.New("no API key")
	errEndpointNotYours = errors.New("the key is sent only to an endpoint of this command line or the user's file")
)

// providerFamily is the user's file's providers entry of a provider:
// openai for Chat Completions and Responses, anthropic for Messages.
func providerFamily(provider string) string {
	if provider == "anthropic" {
		return config.ProviderAnthropic
	}
	return config.ProviderOpenAI
}

// keyEnv is the environment variable of a provider's key.
func keyEnv(provider string) string {
	if provider == "anthropic" {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

// providerKey settles where engine agent sends its requests and with what
// key, and returns the key (given to the provider only: never recorded,
// logged or printed; "" for none).
//
// The key is the environment's (OPENAI_API_KEY, ANTHROPIC_API_KEY) when
// set, else the user's file's providers.NAME.api_key (a secret://
// reference, resolved now): the environment wins, as it does over a file
// for the SDKs and most tools, so one command can use another key without
// editing the file. Project files never name a key (config refuses them).
//
// The endpoint is --base-url; else, for a resumed run, the run's; else the
// user's file's providers.NAME.base_url (set into set, so the run pins it);
// else the provider's own. The key goes only to an endpoint the user gave:
// the provider's own, --base-url, or the user's file's base_url. A resumed
// run's endpoint comes from its log, which whoever started the run wrote:
// when it is none of those, and there is a key, the resume is refused (give
// --base-url again to send the key there) rather than the key sent to a
// server of the log's choosing. Without a key nothing is refused: a local
// server needs none.
func providerKey(ctx context.Context, set *events.ModelSettings, flagURL string, resume bool, l config.Loader, getenv func(string) string) (string, error) {
	fam := providerFamily(set.Provider)
	entry, _, err := l.Provider(fam)
	if err != nil {
		return "", fmt.Errorf("engine agent: the user's file: %w", err)
	}
	if !resume && set.BaseURL == "" {
		set.BaseURL = entry.BaseURL
	}
	key, from := getenv(keyEnv(set.Provider)), keyEnv(set.Provider)
	if key == "" && entry.APIKey != "" {
		from = "providers." + fam + ".api_key"
		sec, err := l.Secrets()
		if err != nil {
			return "", fmt.Errorf("engine agent: the user's file: %w", err)
		}
		if key, err = sec.Resolve(ctx, entry.APIKey); err != nil {
			return "", fmt.Errorf("engine agent: %s (%s:%d): %w", from, entry.File, entry.Line, err)
		}
	}
	switch {
	case key == "" && set.BaseURL == "":
		return "", fmt.Errorf("engine agent --provider %s: set %s, or providers.%s.api_key: secret://NAME in the user's file, or give --base-url for a local server: %w", set.Provider, keyEnv(set.Provider), fam, errNoKey)
	case key != "" && !sameURL(set.BaseURL, "") && !sameURL(set.BaseURL, flagURL) && !sameURL(set.BaseURL, entry.BaseURL):
		return "", fmt.Errorf("engine agent --resume: the run's endpoint %s is neither --base-url nor the user's file's providers.%s.base_url, and the key (%s) is not sent to an endpoint another process wrote in the log: give --base-url %s to send it there, or resume without a key for a server that needs none: %w",
			set.BaseURL, fam, from, set.BaseURL, errEndpointNotYours)
	}
	return key, nil
}

// sameURL reports whether two endpoints are the same, a trailing slash
// aside; "" is the provider's own.
func sameURL(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// checkBaseURL refuses a --base-url that is not an http or https URL with
// a host, or that holds credentials: the endpoint is recorded in the run's
// log and shown by engine show, the key is not.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return usageError{fmt.Sprintf("engine agent: --base-url %q: want an http:// or https:// URL with a host", s)}
	case u.User != nil:
		return usageError{"engine agent: --base-url may not hold credentials (the endpoint is recorded in the run's log and shown): the key comes from the environment or the user's file"}
	}
	return nil
}

// redactor removes the key from a provider's message.
func redactor(key string) func(string) string {
	if len(key) < 4 {
		return nil
	}
	return func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
}
