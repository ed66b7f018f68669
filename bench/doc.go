// Package bench runs the workloads of Stepgate's benchmark (see
// WORKLOADS.md): each against an embedded server in a fresh temporary data
// directory, each reporting one JSON object. Benchmarks are measurements, not
// tests: no thresholds, no sleeps. Ratios are to the raw JetStream baseline
// measured in the same run.
package bench
