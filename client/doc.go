// Package client is the wire contract of the Stepgate service and a typed Go
// client of it.
//
// The service ("stepgate", a NATS micro service) answers requests on
// "stepgate.<endpoint>"; the request and response of every endpoint are the
// types of this package, and each endpoint publishes their JSON Schema as
// its metadata (see [Endpoints] and the files under schema/). Errors carry
// stable codes ([Code]); a remote error is an [*Error] that errors.Is
// matches against the same sentinels the in-process engine returns.
//
// [Dial] connects to NATS and returns a [*Client] whose methods call the
// endpoints, sending a request again where that is safe (after a reconnect,
// a lost answer, or while no host serves), so a client rides out a restart
// of the engine.
//
// The package imports neither the engine's commands nor its projection: a
// Go agent imports it alone.
package client
