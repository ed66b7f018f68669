package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
)

// fail sends one request and returns the *model.Error it must end with.
func fail(t *testing.T, p model.Provider, conv model.Conversation, stream bool) *model.Error {
	t.Helper()
	_, err := p.Next(context.Background(), model.Request{Model: "m", Tools: tools, Conversation: conv, Stream: stream})
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatalf("Next error = %v (%T), want a *model.Error", err, err)
	}
	return me
}

func TestUnauthorizedIsFinalWithTheProviderMessageAndNoKey(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		const wrong = "sk-wrong-7b3e9a1c55d0"
		srv, url := serve(t, fakeprovider.Reply(model.Turn{Text: "never"}))
		e := fail(t, dial(t, name, url, wrong), model.Conversation{Task: "t"}, stream)
		if e.Status != http.StatusUnauthorized || e.Retryable {
			t.Errorf("error = %+v, want status 401, not retryable", e)
		}
		want := "Incorrect API key provided"
		if name == provider.Anthropic {
			want = "invalid x-api-key"
		}
		if !strings.Contains(e.Message, want) || !strings.Contains(e.Error(), want) {
			t.Errorf("message %q / error %q: want the provider's %q", e.Message, e.Error(), want)
		}
		for _, s := range []string{e.Error(), e.Message} {
			if strings.Contains(s, wrong) || strings.Contains(s, testKey) {
				t.Errorf("error %q carries an API key", s)
			}
		}
		if total, _ := srv.Count(); total != 1 {
			t.Errorf("the fake received %d requests, want 1 (the SDK must not retry)", total)
		}
	})
}

func TestKeyEchoedByTheProviderIsRedacted(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		_, url := serve(t, fakeprovider.Fail(fakeprovider.Fault{Status: http.StatusBadRequest,
			Message: "key " + testKey + " is not allowed for model m"}))
		e := fail(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, stream)
		if strings.Contains(e.Error(), testKey) || !strings.Contains(e.Message, "is not allowed for model m") {
			t.Errorf("error %q: want the message without the key", e.Error())
		}
	})
}

func TestRateLimitedIsRetryableWithRetryAfter(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		srv, url := serve(t, fakeprovider.Fail(fakeprovider.RateLimited("7")))
		e := fail(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, stream)
		if e.Status != http.StatusTooManyRequests || !e.Retryable || e.RetryAfter != 7*time.Second {
			t.Errorf("error = %+v, want 429, retryable, retry after 7s", e)
		}
		if !strings.Contains(e.Message, "Rate limit reached") {
			t.Errorf("message %q: want the provider's", e.Message)
		}
		if total, _ := srv.Count(); total != 1 {
			t.Errorf("the fake received %d requests, want 1 (the SDK must not retry)", total)
		}
	})
}

func TestRetryAfterMilliseconds(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			f := fakeprovider.RateLimited("30")
			f.RetryAfterMS = "1500"
			_, url := serve(t, fakeprovider.Fail(f))
			e := fail(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, false)
			if e.RetryAfter != 1500*time.Millisecond {
				t.Errorf("retry after = %v, want 1.5s (retry-after-ms wins)", e.RetryAfter)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	f := fakeprovider.RateLimited(now.Add(90 * time.Second).Format(http.TimeFormat))
	_, url := serve(t, fakeprovider.Fail(f))
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			base := url
			if name != provider.Anthropic {
				base += "/v1"
			}
			p, err := provider.New(name, provider.Options{BaseURL: base, APIKey: testKey, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			if e := fail(t, p, model.Conversation{Task: "t"}, false); e.RetryAfter != 90*time.Second {
				t.Errorf("retry after = %v, want 90s from the HTTP date", e.RetryAfter)
			}
		})
	}
}

func TestServerErrorIsRetryable(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		for _, status := range []int{http.StatusInternalServerError, http.StatusBadGateway, 529} {
			_, url := serve(t, fakeprovider.Fail(fakeprovider.Fault{Status: status}))
			e := fail(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, stream)
			if e.Status != status || !e.Retryable || e.RetryAfter != 0 {
				t.Errorf("error = %+v, want %d, retryable, no retry-after", e, status)
			}
			if e.Message == "" {
				t.Errorf("status %d: empty message", status)
			}
		}
	})
}

func TestRefusedRequestIsFinal(t *testing.T) {
	each(t, func(t *testing.T, name string, stream bool) {
		_, url := serve(t, fakeprovider.Fail(fakeprovider.Fault{Status: http.StatusBadRequest, Message: "context too long"}))
		e := fail(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, stream)
		if e.Status != http.StatusBadRequest || e.Retryable || e.Message != "context too long" {
			t.Errorf("error = %+v, want 400, final, the provider's message", e)
		}
	})
}

// A turn whose calls have no results yet is refused by each API as the
// real one refuses it (the fake is strict the same way).
func TestCallWithoutResultRefusedAsTheAPIDoes(t *testing.T) {
	want := map[string]string{
		provider.OpenAI:          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: id_b",
		provider.OpenAIResponses: "No tool output found for function call id_b.",
		provider.Anthropic:       "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: id_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
	}
	conv := model.Conversation{Task: "t", Exchanges: []model.Exchange{{
		Turn: model.Turn{Calls: []model.ToolCall{
			{ID: "id_a", Name: "bash", Args: json.RawMessage(`{"command":"a"}`)},
			{ID: "id_b", Name: "bash", Args: json.RawMessage(`{"command":"b"}`)},
		}},
		Results: []model.Result{{CallID: "id_a", Name: "bash", Content: "a"}},
	}}}
	each(t, func(t *testing.T, name string, stream bool) {
		srv, url := serve(t, fakeprovider.Reply(model.Turn{Text: "never"}))
		e := fail(t, dial(t, name, url, testKey), conv, stream)
		if e.Status != http.StatusBadRequest || e.Retryable || e.Message != want[name] {
			t.Errorf("error = %+v, want 400, final, %q", e, want[name])
		}
		if _, per := srv.Count(); len(per) != 0 {
			t.Errorf("a refused request counted as answered: %v", per)
		}
	})
}

func TestTransportFailureIsRetryable(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			p := dial(t, name, "http://127.0.0.1:1", testKey) // nothing listens on port 1
			e := fail(t, p, model.Conversation{Task: "t"}, false)
			if e.Status != 0 || !e.Retryable || strings.Contains(e.Error(), testKey) {
				t.Errorf("error = %+v, want status 0, retryable", e)
			}
		})
	}
}

func TestCallerCancellationIsNotAProviderError(t *testing.T) {
	_, url := serve(t, fakeprovider.Reply(model.Turn{Text: "x"}))
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := dial(t, name, url, testKey).Next(ctx, model.Request{Model: "m", Conversation: model.Conversation{Task: "t"}})
			var me *model.Error
			if !errors.Is(err, context.Canceled) || errors.As(err, &me) {
				t.Errorf("err = %v, want context.Canceled and no *model.Error", err)
			}
		})
	}
}

func TestUnknownProvider(t *testing.T) {
	if _, err := provider.New("gemini", provider.Options{}); !errors.Is(err, provider.ErrUnknownProvider) {
		t.Errorf("err = %v, want ErrUnknownProvider", err)
	}
}

func TestErrorInAStartedStream(t *testing.T) {
	for _, name := range providers {
		t.Run(name, func(t *testing.T) {
			_, url := serve(t, fakeprovider.Fail(fakeprovider.Fault{Status: 529, MidStream: true, Message: "Overloaded now"}))
			e := fail(t, dial(t, name, url, testKey), model.Conversation{Task: "t"}, true)
			if !e.Retryable || !strings.Contains(e.Message, "Overloaded now") || strings.Contains(e.Error(), testKey) {
				t.Errorf("error = %+v, want retryable with the provider's message", e)
			}
		})
	}
}
