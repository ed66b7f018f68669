// Package provider implements model.Provider over the official SDKs:
// OpenAI Chat Completions ("openai"), the OpenAI Responses API used
// statelessly ("openai-responses") and Anthropic Messages ("anthropic").
//
// Every request rebuilds the provider's own message list from the
// model.Conversation (system, the user's task, then per exchange the
// assistant turn and one result per call, in call order), so the same
// conversation always produces the same request. The SDKs' own retries are
// off by default: the agent loop owns backoff, and every refusal or failure
// is returned as a *model.Error with its status, whether it is retryable and
// the provider's Retry-After.
package provider

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stepgate/stepgate/agent/model"
)

// Provider names accepted by New.
const (
	OpenAI          = "openai"
	OpenAIResponses = "openai-responses"
	Anthropic       = "anthropic"
)

// ErrUnknownProvider is returned by New for a name it does not know.
var ErrUnknownProvider = errors.New("unknown model provider")

// Options configure a provider. The zero value talks to the provider's
// public endpoint with the SDK's default HTTP client and no retries.
type Options struct {
	// BaseURL replaces the provider's endpoint, e.g. an OpenAI-compatible
	// server ("http://127.0.0.1:8000/v1") or a fake. The SDKs append their
	// paths to it: "chat/completions" and "responses" for OpenAI (whose
	// default base ends in /v1/), "v1/messages" for Anthropic.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer" (OpenAI) or "x-api-key"
	// (Anthropic). It never appears in an error this package returns.
	APIKey string
	// HTTPClient, when set, carries every request.
	HTTPClient *http.Client
	// MaxRetries is the SDK's own retry count; 0 (the default) leaves
	// retries to the caller.
	MaxRetries int
	// RequestTimeout bounds one request, including reading a stream; 0
	// leaves it to the caller's context.
	RequestTimeout time.Duration
	// Now is the clock used to turn a Retry-After HTTP date into a delay;
	// nil means time.Now.
	Now func() time.Time
}

// New returns the provider called name ("openai", "openai-responses" or
// "anthropic") configured by opts.
func New(name string, opts Options) (model.Provider, error) {
	if opts.MaxRetries < 0 {
		return nil, fmt.Errorf("model provider %s: max retries %d is negative", name, opts.MaxRetries)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch name {
	case OpenAI:
		return newChat(opts), nil
	case OpenAIResponses:
		return newResponses(opts), nil
	case Anthropic:
		return newAnthropic(opts), nil
	default:
		return nil, fmt.Errorf("%w %q (want %s, %s or %s)", ErrUnknownProvider, name, OpenAI, OpenAIResponses, Anthropic)
	}
}
