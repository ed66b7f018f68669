package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MaxFileBytes is the most a configuration file may hold — the user's, a
// project's, a policy candidate (replay --policy), the secrets file. A
// larger one is refused unread. It also bounds what parsing one costs: the
// YAML library spends up to about 500 bytes of memory per byte of hostile
// text (the worst found, an unclosed flow sequence, about 130 MB at this
// size), where a real configuration is a few KiB.
const MaxFileBytes = 256 << 10

// openRegular opens path for reading and returns it with its own fstat,
// or refuses it. The open never blocks (O_NONBLOCK: a named pipe opens at
// once, where a plain open would wait for a writer for ever) and never
// makes the file the process's terminal; with nofollow a symbolic link as
// the last element is refused by the kernel (ELOOP), with no window between
// a check and the open. What was opened is then judged by its descriptor,
// not by a second look at the path: anything but a regular file, and a file
// larger than MaxFileBytes, is closed and refused with a [*Error] naming
// path and why. An open that fails returns the *fs.PathError as it came.
func openRegular(path string, nofollow bool) (*os.File, fs.FileInfo, error) {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regularFile(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// regularFile refuses fi unless it is a regular file of at most
// MaxFileBytes.
func regularFile(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &Error{File: path, Key: "(file)", Msg: fmt.Sprintf("%s, not a regular file: configuration is read from regular files only", kindOf(fi.Mode()))}
	}
	if fi.Size() > MaxFileBytes {
		return tooLarge(path, fi.Size())
	}
	return nil
}

// tooLarge is the refusal of a file past MaxFileBytes; size is its size, or
// -1 when only that it is larger is known.
func tooLarge(path string, size int64) error {
	msg := fmt.Sprintf("more than the %d bytes a configuration file may hold", MaxFileBytes)
	if size >= 0 {
		msg = fmt.Sprintf("%d bytes, %s", size, msg)
	}
	return &Error{File: path, Key: "(file)", Msg: msg}
}

// kindOf names a file mode's type, for a refusal.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file (" + m.Type().String() + ")"
}

// readCapped reads r to its end through an io.LimitReader, so never more
// than MaxFileBytes+1 bytes: a file that grew past MaxFileBytes since its
// fstat (or whose size the kernel does not report) is refused once that
// one byte too many has been read, and nothing more is read or kept.
func readCapped(r io.Reader, path string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read configuration %s: %w: %w", path, ErrInvalid, err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge(path, -1)
	}
	return data, nil
}

// readFile is the text of the configuration file at path: opened and
// judged by openRegular, read by readCapped. A missing file is an
// fs.ErrNotExist error. With nofollow (a project's file) a symbolic link is
// refused: writes are protected at the path they resolve to, so a link
// would let an unprotected file, or a device, be read as configuration.
func readFile(path string, nofollow bool) ([]byte, error) {
	f, _, err := openRegular(path, nofollow)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if nofollow && errors.Is(err, syscall.ELOOP) {
		return nil, &Error{File: path, Key: "(file)", Msg: filepath.Base(path) + " is a symbolic link: the project configuration must be a plain file in the location, where it is protected"}
	}
	var ce *Error
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read configuration %s: %w: %w", path, ErrInvalid, err)
	}
	defer f.Close()
	return readCapped(f, path)
}
