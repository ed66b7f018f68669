// Package projection follows the log and keeps its folds up to date. The
// folds themselves are pure and live in package fold (runs, registry,
// grants, quarantine); their types are used here under the same names.
// The [Projector] follows the stream (follow.go), applies every message in
// order or quarantines it (admit.go, apply.go), keeps the indexes that span
// runs (index.go, pending.go), and checkpoints the state into bbolt in
// batches so that a restart replays only the tail (flush.go, checkpoint.go,
// blobs.go, index_checkpoint.go, pending_codec.go, registry_store.go).
//
// Readers get values, never a callback under the projector's lock
// (read.go): [Projector.Header] is a run without its steps but the last,
// [Projector.Step] one step, [Projector.Run] a deep copy of the whole run.
// The fold never changes in place what a header or a step holds, so the
// value a reader got stays as it was read.
//
// The package imports only the vocabulary (events), its folds and bbolt;
// it reads the stream through the small [Source] interface.
package projection
