package executor

import "errors"

var (
	// ErrDuplicateTool is wrapped when two tools of one registry share a name.
	ErrDuplicateTool = errors.New("duplicate tool name")
	// ErrNilTool is wrapped when a nil tool or handler is given.
	ErrNilTool = errors.New("nil tool")
	// ErrOptionType is wrapped when WithRequests or WithObserve was given a
	// function whose input type is not the tool's input type.
	ErrOptionType = errors.New("option function does not take the tool's input type")

	// Path failures of Resolve; their texts are the codes of spec/tools.md
	// ("Locations").

	// ErrNoLocation: the call has no usable location to resolve paths against.
	ErrNoLocation = errors.New("no_location")
	// ErrRelativeEscape: a relative path leaves the location lexically (../x).
	ErrRelativeEscape = errors.New("relative_escape")
	// ErrLocationEscape: a path inside the location lexically whose real
	// path, after symlinks, is outside it.
	ErrLocationEscape = errors.New("location_escape")
	// ErrNonDirectoryAncestor: the nearest existing ancestor of a path is not
	// a directory.
	ErrNonDirectoryAncestor = errors.New("non_directory_ancestor")
	// ErrBadPath: an empty path, or one holding NUL or a line break.
	ErrBadPath = errors.New("bad_path")
	// ErrProcessPath: a path through /proc, /dev/fd or the standard
	// streams' names (/dev/stdin, …), written so or reached through a
	// symlink: what it names depends on the process that opens it.
	ErrProcessPath = errors.New("process_path")

	// ErrPathChanged: a path resolves, when the call runs, to another real
	// path than when the call was decided (a directory swapped for a symlink
	// after the approval). Its text is the model's, followed by the path.
	ErrPathChanged = errors.New("Path changed after permission approval")
)

// InputError reports arguments that cannot become a call: they are not JSON, do not
// match the input schema, do not decode into the tool's input type, or the tool's
// permission requests refused them (a path that leaves the location, say). The tool
// was not run. Error() is the model-visible text, "Invalid tool input: <detail>".
type InputError struct {
	Tool   string // the tool's name
	Detail string // one line, for the model
	Err    error  // the cause, when there is one
}

// Error is the message the model sees: Invalid tool input and the detail.
func (e *InputError) Error() string { return InvalidInput(e.Detail) }

// Unwrap returns the cause, so errors.Is sees a tool's own sentinels.
func (e *InputError) Unwrap() error { return e.Err }
