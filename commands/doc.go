// Package commands is what a client may ask of Stepgate: start a run,
// materialize its catalogue, submit a step, end a run, and read runs back.
// Each handler reads the projections, asks the gate, drives the executor and
// commits through step. It is the only place where "decide" meets "effect",
// and it never bypasses the gate or writes outside step.
//
// The package is usable as a library: [New] takes a commit log, a projector
// and a tool registry, which an embedded server provides in-process.
package commands
