// Package service serves the engine's API as the "stepgate" NATS micro
// service: one endpoint per command on "stepgate.<endpoint>", requests and
// responses in the wire contract's types (package client), each endpoint's
// JSON Schemas in its metadata, errors as micro service errors with stable
// codes.
//
// It is the binary's (cmd/engine) and a package of its own only so that the
// client's runnable example and tests can serve a real engine; it holds no
// domain logic.
package service
