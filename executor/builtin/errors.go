package builtin

import (
	"errors"

	"github.com/stepgate/stepgate/executor"
)

// Path failures: the executor's, and read_file's own refusal of paths
// outside the location.
var (
	// ErrNoLocation: the call has no usable location to resolve paths against.
	ErrNoLocation = executor.ErrNoLocation
	// ErrRelativeEscape: a relative path leaves the location lexically (../x).
	ErrRelativeEscape = executor.ErrRelativeEscape
	// ErrLocationEscape: a path inside the location lexically whose real path, after
	// symlinks, is outside it.
	ErrLocationEscape = executor.ErrLocationEscape
	// ErrNonDirectoryAncestor: the nearest existing ancestor of a path is not a directory.
	ErrNonDirectoryAncestor = executor.ErrNonDirectoryAncestor
	// ErrProcessPath: a path through /proc, /dev/fd or a standard stream's
	// name, which names a file as the process that opens it sees it.
	ErrProcessPath = executor.ErrProcessPath
	// ErrExternalPath: an absolute path outside the location, which read_file does not read.
	ErrExternalPath = errors.New("external_path")
)
