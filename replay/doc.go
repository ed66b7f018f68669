// Package replay reads the past of the log: every projection folded to any
// step of a run (time travel), recorded calls decided again against another
// policy with the gate's own function and the grants as they stood
// (backtest), two runs compared step by step (diff), and every decision
// exported for audit. Everything happens in memory: nothing is executed and
// nothing is committed (a fork, which commits, is a command).
package replay
