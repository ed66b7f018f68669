// Package jsonfast is Stepgate's one hand-written JSON: the few things on a
// step's hot path that encoding/json, the library for everything else, does
// several times slower. Nothing else in the module writes or reads JSON
// syntax by hand.
//
//   - [Writer] writes the commit of every step and the checkpoint's copy of
//     every step (events, projection), with [Valid] checking the raw values
//     it copies (a call's arguments, a structured result) and
//     [AppendString] quoting strings.
//   - [Parse] reads every tool call's arguments into the generic value the
//     schema validator checks, and [Scanner] fills a flat tool input
//     straight from the bytes (executor).
//   - [Scanner]'s value readers ([Scanner.Str], [Scanner.Int], [Scanner.Raw]
//     and the rest) read every commit the projector folds from the stream
//     straight into its Go values, declining what encoding/json must read
//     (events' Unmarshal).
//
// Each is held to encoding/json by a property or fuzz test: what it writes
// decodes to what encoding/json's output decodes to, what it reads it reads
// as encoding/json does, and it accepts exactly the JSON encoding/json
// accepts.
//
// The A/B behind it, Go benchmarks on 2 shared cores (median of 6, ns/op,
// allocs/op):
//
//	a w1 commit (events BenchmarkAppend / BenchmarkAppendEncodingJSON):
//	    Writer 2,460, 0 allocs; encoding/json 12,007, 4 allocs
//	    (github.com/go-json-experiment/json, the upstream of encoding/json/v2,
//	    by reflection: 8,500, 10 allocs; its jsontext.AppendQuote and
//	    Value.IsValid alone cost 2x and 1.6x AppendString and Valid)
//	echo's arguments (executor BenchmarkEchoInputDecode):
//	    Scanner 2,254, 5 allocs; Parse and the flat decoder 3,559, 8;
//	    encoding/json 5,908, 7
//	arguments into a generic value (BenchmarkParseAny):
//	    Parse 2,380, 8 allocs; encoding/json with UseNumber 7,158, 12
//	    (a string with escapes in one allocation since: 1,193-2,153, 5)
//	a w5 step commit read back (events BenchmarkUnmarshal, 2 runs of 3
//	alternated with the build before, on cores other sessions loaded):
//	    Scanner 5,572-8,779, 19 allocs; encoding/json (the build before)
//	    30,585-44,118, 76
//
// A step costs about 40 µs of wall time and 54 µs of CPU (engine bench w1,
// w2): encoding/json would add 10 µs to each commit and 3 to 5 µs to each
// call's arguments. A rebuild (engine bench w5) spent about 80% of its CPU
// decoding commits with encoding/json, the envelope and then each payload
// again: 19.5 µs of CPU an event and 52,000-65,000 events/s; read through
// Scanner, 6 to 8 µs an event. The writer's own price, against the appenders it
// replaced (each payload appending its syntax itself), is 0.2 to 0.4 µs a
// commit (BenchmarkAppend 2,098 before, 2,460 after).
package jsonfast
