// Package projection folds the log back into state. The folds are pure: a
// test calls them with a slice of commits. The [Projector] follows the stream,
// applies every commit in order, and checkpoints the state into bbolt in
// batches so that a restart replays only the tail.
//
// The package imports only the vocabulary (events) and bbolt; it reads the
// stream through the small [Source] interface.
package projection
