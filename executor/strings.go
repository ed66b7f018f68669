package executor

import "fmt"

// The model-visible failure texts of spec/tools.md. Callers build results with these
// so that every host words a failure the same way.
const (
	// InvalidInputPrefix starts the text of a call whose arguments fail to decode or
	// to match the input schema; the tool was not run.
	InvalidInputPrefix = "Invalid tool input: "
	// InvalidOutputPrefix starts the text of a call whose output does not match the
	// tool's output schema.
	InvalidOutputPrefix = "Tool returned an invalid value for its output schema: "
	// EmptyOutput is the text of a successful call that produced no text.
	EmptyOutput = "Tool completed successfully without output."
	// EmptyError is the text of a failed call whose error has no text.
	EmptyError = "Tool failed without an error message."
)

// UnknownTool is the text of a call to a tool that was not advertised to the run.
func UnknownTool(name string) string { return "Unknown tool: " + name }

// StaleTool is the text of a call to a tool whose advertised registration was
// replaced or revoked.
func StaleTool(name string) string { return "Stale tool call: " + name }

// NotInstalled is the text of a call to a tool that has no implementation on this host.
func NotInstalled(name string) string { return "Tool is not installed on this host: " + name }

// InvalidInput is the text of a call whose arguments are invalid.
func InvalidInput(detail string) string { return InvalidInputPrefix + detail }

// InvalidOutput is the text of a call whose output fails the output schema.
func InvalidOutput(detail string) string { return InvalidOutputPrefix + detail }

// Panicked is the text of a call whose tool panicked with v.
func Panicked(v any) string { return fmt.Sprintf("Tool panicked: %v", v) }

// NotStarted is the text of a call whose context ended before the tool started.
func NotStarted(err error) string { return "Tool call was not started: " + err.Error() }
