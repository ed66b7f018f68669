package main

import (
	"errors"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/events"
)

// newProvider is the provider the settings name, with key.
func newProvider(set events.ModelSettings, key string) (model.Provider, error) {
	return nil, errors.New("engine agent: the providers are not in this build yet")
}
