// Package hosting assembles an engine host as `engine serve` runs it, for
// the engine binary and for a program that embeds Stepgate:
//
//   - StartEmbedded starts a host on an embedded NATS server with its
//     storage, checkpoints and identity in a data directory (which it locks
//     for the process); StartHost starts one on a NATS connection of the
//     caller's.
//   - Start assembles a served host: the host (embedded, or on an external
//     NATS server or cluster it waits for), the stepgate service, the
//     Prometheus metrics endpoint, the webhook deliverer of the user's file,
//     the operators' web app and, on an external server, the fleet's
//     configuration document followed as it changes. Served.Run runs them
//     until the context ends or one of them stops.
//   - NewTracing is the OpenTelemetry set-up the environment asks for, and
//     ReconnectOptions how a host's connection to an external NATS server
//     waits out an outage.
//
// The package takes plain typed options, never flag sets: the engine's
// verbs parse and check their flags and build Options and ServeOptions.
// Nothing is registered or built at package level: Prometheus metrics are
// made only when ServeOptions.MetricsAddr asks for them.
package hosting
