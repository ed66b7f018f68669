package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"unicode/utf8"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// MaxReadFileBytes is read_file's memory guard: a larger file is refused, not cut.
// Cutting output for the model is the output store's job alone.
const MaxReadFileBytes = 10 << 20

// ReadFileInput is the input of read_file.
type ReadFileInput struct {
	Path string `json:"path" jsonschema:"description=Path of the file relative to the workspace root (an absolute path must be inside the workspace)"`
}

// ReadFile builds read_file: a read-only tool that returns the text of one UTF-8 file
// inside the call's location. It raises one permission request, `read` on the file's
// location-relative path (saved as "*"). Paths that leave the location, lexically or
// through a symlink, are refused before any permission is asked, and checked again
// when the file is opened.
func ReadFile() (*executor.Tool, error) {
	return executor.New("read_file", "Read a UTF-8 text file inside the workspace and return its text. Binary files are refused, judged by content (a NUL byte or invalid UTF-8 anywhere); a text file is read whatever its name.", readFile,
		executor.WithEffect(descriptor.ReadOnly),
		executor.WithAction("read"),
		executor.WithRequests(func(c executor.Call, in ReadFileInput) ([]descriptor.Request, error) {
			p, err := resolveInLocation(c, in.Path)
			if err != nil {
				return nil, err
			}
			return []descriptor.Request{{Action: "read", Resources: []string{p.Resource()}, Save: []string{"*"}}}, nil
		}),
	)
}

func readFile(_ context.Context, c executor.Call, in ReadFileInput) (string, error) {
	// Resolve again: time (and a human's approval) may have passed since Prepare.
	p, err := resolveInLocation(c, in.Path)
	if err != nil {
		return "", err
	}
	f, fi, err := openForModel(p, in.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory, not a file", in.Path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxReadFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", in.Path, err)
	}
	if len(b) > MaxReadFileBytes {
		return "", fmt.Errorf("%s is larger than %d bytes, the most read_file reads (a memory guard; nothing was returned)", in.Path, MaxReadFileBytes)
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", binaryRefusal(in.Path)
	}
	return string(b), nil
}

// pathErr drops the absolute path an *fs.PathError repeats: the model knows the path
// it asked for, and the host's layout is none of its business.
func pathErr(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
