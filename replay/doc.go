// Package replay reads the past: it answers questions about recorded runs
// from the log alone, in memory, executing and committing nothing.
//
// The policy backtest (see [Backtest]) re-decides every recorded call
// against a candidate configuration with the gate's own pure functions and
// the project's saved approvals as they stood at that point in the stream,
// and yields the verdicts that would change.
//
// The package imports projection/fold, gate, events, step and config; never
// commands or executor.
package replay
