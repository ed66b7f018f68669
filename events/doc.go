// Package events is Stepgate's vocabulary: the commit envelope, the event
// types with their wire names and schema versions, the subjects they are
// stored under, and the JSON codec that reads and writes them.
//
// A commit is one JetStream message holding an ordered list of events. Wire
// names are explicit strings, never derived from Go type names, so renaming a
// Go type cannot orphan stored events. Readers accept what they do not know:
// an unknown type, or a version newer than this build understands, decodes
// into an [Unknown] value that folds skip.
//
// The package imports only the standard library and ULID.
package events

//go:generate go run ./internal/evdoc/gen -o ../docs/reference/events.md
