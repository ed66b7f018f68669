package main

import (
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service"
)

// The service's subjects and endpoint names (package client's), as this
// package's tests name them.
const (
	subjectPrefix = sgclient.SubjectPrefix
	epStartRun    = sgclient.EndpointStartRun
	epShow        = sgclient.EndpointShow
	epAwait       = sgclient.EndpointAwait
)

// endpoints is the set of the service's endpoints.
func endpoints() map[string]bool {
	out := map[string]bool{}
	for _, name := range service.Names() {
		out[name] = true
	}
	return out
}

// decodeRequest is the service's request decoder.
func decodeRequest[Req any](body []byte) (Req, error) { return service.DecodeRequest[Req](body) }
