// Package gate decides whether a tool call may run.
//
// It holds the pure core of Stepgate's permission model: wildcard matching
// of rule patterns ([Match]), last-match-wins rule evaluation ([Evaluate],
// [EvaluateInput]) with an untrusted project's rules decided apart, never
// loosening the others' ([SourceProjectNarrowing]), capability narrowing
// ([Narrowing]), the verdict for a
// whole tool call ([Decide]) and the verdict on a call decided again when
// its confirmation is answered ([Resume]). Every function is a pure function of its
// arguments: the package performs no I/O, keeps no state and is safe for
// concurrent use.
package gate
