package main

import (
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
	"github.com/stepgate/stepgate/events"
)

// newProvider is the provider the settings name, with key (given to the
// provider only; it scrubs it from its errors).
func newProvider(set events.ModelSettings, key string) (model.Provider, error) {
	return provider.New(set.Provider, provider.Options{BaseURL: set.BaseURL, APIKey: key})
}
