// Package replay reads the past of the log: every projection folded to any
// step of a run (time travel), two runs compared step by step (diff), every
// decision exported for audit, and recorded calls decided again against
// another policy (backtest). Everything happens in memory: nothing is
// executed and nothing is committed (a fork, which commits, is a command).
package replay
