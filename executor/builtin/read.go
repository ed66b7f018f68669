package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// Read's page bounds.
const (
	ReadMaxLines    = 2000
	ReadMaxBytes    = 50 << 10
	ReadMaxLineLen  = 2000
	readSniffLength = 8 << 10
)

// ReadInput is the input of read.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"description=The file or directory to read (relative to the workspace, or absolute)"`
	Offset int    `json:"offset,omitempty" jsonschema:"description=The line (of a directory: the entry) to start at, from 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"description=At most this many lines or entries (at most 2000)"`
}

// Read builds read: a page of a text file with line numbers (at most 2000
// lines and 50 KiB a page, lines over 2000 characters cut with a notice),
// or a page of a directory's listing (offset and limit count entries).
// Binary files are refused, by content: a NUL byte or invalid UTF-8 in the
// first 8 KiB, or anywhere in a file named like a binary format (see
// binaryExtensions). Permission: read on
// the path (saved as "*"), and external_directory first for a path outside
// the location — the build agent allows the tool-output directory, so the
// model can page through spilled output.
func Read() (*executor.Tool, error) {
	return executor.New("read",
		"Read a text file a page at a time (line-numbered; at most 2000 lines or 50 KiB a page; lines over 2000 characters are cut with a notice; use offset to go on), or list a directory (sorted entries, directories ending in /; offset and limit count entries, at most 2000 a page). "+
			"Binary files are refused, judged by content: a NUL byte or invalid UTF-8 in the first 8 KiB, or anywhere in a file named like a binary format (compiled code, archives, images — read returns no images —, audio, video, .pdf and office documents, fonts, databases). A text file is read whatever its name.",
		readPage, executor.WithEffect(descriptor.ReadOnly),
		executor.WithRequests(func(c executor.Call, in ReadInput) ([]descriptor.Request, error) {
			if in.Offset < 0 || in.Limit < 0 || in.Limit > ReadMaxLines {
				return nil, fmt.Errorf("offset must be ≥ 1 and limit between 1 and %d", ReadMaxLines)
			}
			return pathRequests(c, in.Path, "read", true)
		}))
}

func readPage(_ context.Context, c executor.Call, in ReadInput) (string, error) {
	p, err := c.Resolve(in.Path, true) // again at run time
	if err != nil {
		return "", err
	}
	f, fi, err := openForModel(p, in.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi.IsDir() {
		return listDir(f, in)
	}
	return pageOf(f, in, binaryByName(in.Path))
}

// binaryRefusal is the refusal of a binary file, by name or by content.
func binaryRefusal(path string) error {
	//lint:ignore ST1005 the text is model-visible and spelled by the spec
	return fmt.Errorf("Cannot read binary file: %s", path)
}

// openForModel is openResolved with the errors the model reads, naming the
// path as the model gave it.
func openForModel(p executor.Path, asked string) (*os.File, fs.FileInfo, error) {
	f, fi, err := openResolved(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("file not found: %s", asked)
	case errors.Is(err, errNotRegular):
		return nil, nil, fmt.Errorf("%s is not a regular file", asked)
	case err != nil:
		return nil, nil, fmt.Errorf("cannot read %s: %v", asked, pathErr(err))
	}
	return f, fi, nil
}

// readResolved reads the whole file at p (not a directory), through
// openResolved.
func readResolved(p executor.Path) (string, error) {
	f, fi, err := openResolved(p)
	if err != nil {
		return "", pathErr(err)
	}
	defer f.Close()
	if fi.IsDir() {
		return "", errors.New("it is a directory")
	}
	b, err := io.ReadAll(f)
	return string(b), err
}

// errNotRegular: the path is neither a regular file nor a directory.
var errNotRegular = errors.New("not a regular file")

// statResolved stats p: inside the location through os.Root, outside at
// its real path.
func statResolved(p executor.Path) (fs.FileInfo, error) {
	if p.External {
		return os.Stat(p.Real)
	}
	root, err := os.OpenRoot(p.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Stat(p.Rel)
}

// openResolved opens the regular file or directory at p: inside the
// location through os.Root (which refuses a symlink out, even one swapped in
// after the checks), outside at its real path. It stats first, so a FIFO or
// a device is refused with errNotRegular instead of blocking the open.
func openResolved(p executor.Path) (*os.File, fs.FileInfo, error) {
	fi, err := statResolved(p)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, fi, errNotRegular
	}
	var f *os.File
	if p.External {
		f, err = os.Open(p.Real)
	} else {
		var root *os.Root
		if root, err = os.OpenRoot(p.Root); err != nil {
			return nil, nil, err
		}
		defer root.Close()
		f, err = root.Open(p.Rel)
	}
	if err != nil {
		return nil, nil, err
	}
	return f, fi, nil
}

// listDir lists a directory's entries, sorted, directories marked with a
// slash: in.Offset is the first entry shown (from 1), in.Limit how many at
// most (default ReadMaxLines); a cut listing says how to go on.
func listDir(f *os.File, in ReadInput) (string, error) {
	entries, err := f.ReadDir(-1)
	if err != nil {
		return "", fmt.Errorf("cannot list %s: %v", in.Path, pathErr(err))
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
		if e.IsDir() {
			names[i] += "/"
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return in.Path + " is an empty directory", nil
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = ReadMaxLines
	}
	if offset > len(names) {
		//lint:ignore ST1005 the text is model-visible and spelled by the spec
		return "", fmt.Errorf("Offset %d is out of range: the directory has %d entries", offset, len(names))
	}
	page := names[offset-1:]
	cut := len(page) > limit
	if cut {
		page = page[:limit]
	}
	out := strings.Join(page, "\n")
	switch {
	case cut:
		out += fmt.Sprintf("\n(more entries follow: read again with offset %d; the directory has %d entries)", offset+limit, len(names))
	case offset > 1:
		out += fmt.Sprintf("\n(end of directory: %d entries)", len(names))
	}
	return out, nil
}

// pageOf is a page of the text file f; a file that is not text in its
// first 8 KiB, or anywhere when whole, is refused as binary.
func pageOf(f *os.File, in ReadInput, whole bool) (string, error) {
	r := bufio.NewReaderSize(f, 64<<10)
	head, _ := r.Peek(readSniffLength)
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)) {
		return "", binaryRefusal(in.Path)
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = ReadMaxLines
	}
	var b strings.Builder
	n, shown, bytesOut, cut := 0, 0, 0, false
	for {
		line, err := r.ReadString('\n')
		if line == "" && err != nil {
			break
		}
		if whole && (strings.IndexByte(line, 0) >= 0 || !utf8.ValidString(line)) {
			return "", binaryRefusal(in.Path)
		}
		n++
		if n < offset || cut {
			if err != nil {
				break
			}
			continue
		}
		line = strings.TrimRight(line, "\r\n")
		if len(line) > ReadMaxLineLen {
			line = strings.ToValidUTF8(line[:ReadMaxLineLen], "") + fmt.Sprintf(" … [line cut at %d characters]", ReadMaxLineLen)
		}
		entry := fmt.Sprintf("%6d\t%s\n", n, line)
		if shown == limit || bytesOut+len(entry) > ReadMaxBytes {
			cut = true
			if err != nil {
				break
			}
			continue
		}
		b.WriteString(entry)
		shown++
		bytesOut += len(entry)
		if err == io.EOF {
			break
		}
	}
	if offset > 1 && offset > n {
		//lint:ignore ST1005 the text is model-visible and spelled by the spec
		return "", fmt.Errorf("Offset %d is out of range: the file has %d lines", offset, n)
	}
	if cut {
		fmt.Fprintf(&b, "(more lines follow: read again with offset %d; the file has %d lines)", offset+shown, n)
	} else {
		fmt.Fprintf(&b, "(end of file: %d lines)", n)
	}
	return b.String(), nil
}

// trimPartialRune drops a UTF-8 sequence cut by the sniffing window.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if r, size := utf8.DecodeLastRune(b[:len(b)-i]); r != utf8.RuneError || size > 1 {
			return b[:len(b)-i]
		}
	}
	return b
}
