package main

import (
	"time"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
	"github.com/stepgate/stepgate/events"
)

// modelRequestTimeout bounds one model request (a stream read whole
// included): a server that hangs is a timeout, which the loop retries.
const modelRequestTimeout = 10 * time.Minute

// newProvider is the provider the settings name, with key (given to the
// provider only; it scrubs it from its errors).
func newProvider(set events.ModelSettings, key string) (model.Provider, error) {
	return provider.New(set.Provider, provider.Options{BaseURL: set.BaseURL, APIKey: key, RequestTimeout: modelRequestTimeout})
}
