// Package step is Stepgate's commit boundary: it sets up the stream, appends
// one commit as one JetStream message with optimistic concurrency and
// de-duplication, and reads commits back. Nothing else in Stepgate writes to
// the log. The package knows commits, not tools.
package step
