package builtin

import "errors"

// Path failures; their texts are the codes of spec/tools.md ("Locations").
var (
	// ErrNoLocation: the call has no usable location to resolve paths against.
	ErrNoLocation = errors.New("no_location")
	// ErrRelativeEscape: a relative path leaves the location lexically (../x).
	ErrRelativeEscape = errors.New("relative_escape")
	// ErrLocationEscape: a path inside the location lexically whose real path, after
	// symlinks, is outside it.
	ErrLocationEscape = errors.New("location_escape")
	// ErrNonDirectoryAncestor: the nearest existing ancestor of a path is not a directory.
	ErrNonDirectoryAncestor = errors.New("non_directory_ancestor")
	// ErrExternalPath: an absolute path outside the location, which read_file does not read.
	ErrExternalPath = errors.New("external_path")
)
