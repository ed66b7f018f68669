// Package fold holds the pure folds of the log: a run ([Run.Apply]), the
// registry's location layer ([Registry]), saved approvals ([Grants]) and
// the record of messages no fold applied ([Quarantine]). A fold is a
// deterministic function of its state and one commit: no I/O, no clock, no
// lock; a test calls it with a slice of commits. The projector (package
// projection) follows the stream, applies these folds in stream order and
// checkpoints their state.
//
// A run's fold never changes in place what it has handed out: before a
// commit changes a step's calls, the tickets or the state, it copies them
// (the copy undo needs anyway) and writes into the copy. So a [RunHeader]
// or a [Step] read from a run stays as it was read, at the cost of a
// struct copy.
package fold
