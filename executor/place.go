package executor

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/oklog/ulid/v2"
	"github.com/stepgate/stepgate/internal/strictjson"
)

// MarkerPath is where a location keeps its identity's id, relative to the
// location: inside .stepgate/, a protected path the model's tools may not
// write.
const MarkerPath = ".stepgate/location"

// maxMarker bounds a marker file: ours is about 40 bytes.
const maxMarker = 512

// ErrNotPlace is a directory that is not the place a run pinned: missing,
// without its marker, with another id, or with other inode numbers (another
// machine's directory at the same path, a copy, a directory moved away and
// made again).
var ErrNotPlace = errors.New("not the run's location")

// Place is a location's identity (events.Place on the wire): the id in its
// marker file and the inode numbers of the directory and of the marker as
// the host that marked it saw them. Host is set only for a location that
// could not be marked (a read-only directory): then only that host holds it.
type Place struct {
	ID      string
	DirIno  uint64
	MarkIno uint64
	Host    string
}

// marker is the marker file's content.
type marker struct {
	V  int    `json:"v"`
	ID string `json:"id"`
}

// MarkLocation returns the place of the directory dir, marking it first
// when it has no marker yet: .stepgate/ is made if missing and the marker
// written once (never rewritten), with an id from newID. Everything happens
// inside dir (os.Root: a symbolic link cannot lead the marker out of it). A
// directory the engine cannot write is placed without a marker, for host
// alone.
func MarkLocation(dir, host string, newID func() string) (Place, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Place{}, fmt.Errorf("location %s: %w", dir, err)
	}
	defer root.Close()
	dirIno, _, err := inodeOf(root, ".")
	if err != nil {
		return Place{}, fmt.Errorf("location %s: %w", dir, err)
	}
	if p, err := readMarker(root); err == nil {
		p.DirIno = dirIno
		return p, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Place{}, fmt.Errorf("location %s: %w", dir, err)
	}
	id := newID()
	if linked, err := writeMarker(root, id); err != nil && !(linked && errors.Is(err, fs.ErrExist)) {
		// (a link refused as existing: another start marked it a moment
		// ago, and its marker is read below)
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			return Place{ID: id, DirIno: dirIno, Host: host}, nil
		}
		return Place{}, fmt.Errorf("location %s: mark it: %w", dir, err)
	}
	p, err := readMarker(root)
	if err != nil {
		return Place{}, fmt.Errorf("location %s: %w", dir, err)
	}
	p.DirIno = dirIno
	return p, nil
}

// writeMarker makes the marker whole or not at all: written and synced
// under a name of its own, then linked to MarkerPath (a link never
// replaces a file: of two starts that mark one location at once, one
// links, the other finds its marker, complete, and reads it).
//
// linked is true when the error is the link's (the file was written): a
// link refused as existing means another start's marker is in place.
func writeMarker(root *os.Root, id string) (linked bool, err error) {
	switch err := root.Mkdir(filepath.Dir(MarkerPath), 0o755); {
	case err == nil:
		ignoreMarker(root)
	case !errors.Is(err, fs.ErrExist):
		return false, err
	}
	var suffix [8]byte
	_, _ = rand.Read(suffix[:])
	// A name of this attempt's own: two attempts of one start (a request
	// sent again) mark with one id.
	tmp := MarkerPath + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	defer func() { _ = root.Remove(tmp) }()
	data, _ := json.Marshal(marker{V: 1, ID: id})
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return false, err
	}
	return true, root.Link(tmp, MarkerPath)
}

// markerIgnore keeps the marker out of the project's git status: it is
// this machine's directory's identity, not the project's (a copy of it
// elsewhere is refused as a copy).
const markerIgnore = "# made by Stepgate: the location's identity belongs to this directory, not to the project\nlocation\nlocation.*.tmp\n.gitignore\n"

// ignoreMarker writes .stepgate/.gitignore into a .stepgate/ that marking
// made (one the project already had is left alone: it may be tracked).
// Best effort: a location that cannot take it is marked all the same.
func ignoreMarker(root *os.Root) {
	f, err := root.OpenFile(filepath.Join(filepath.Dir(MarkerPath), ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	_, _ = f.WriteString(markerIgnore)
	_ = f.Close()
}

// readMarker reads the marker: a regular file (not a link) of at most
// maxMarker bytes holding version 1 and a ULID. The open never blocks (a
// named pipe in its place is refused, not waited on).
func readMarker(root *os.Root) (Place, error) {
	fi, err := root.Lstat(MarkerPath)
	if err != nil {
		return Place{}, err
	}
	if !fi.Mode().IsRegular() {
		return Place{}, fmt.Errorf("%s is not a regular file: %w", MarkerPath, ErrNotPlace)
	}
	f, err := root.OpenFile(MarkerPath, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Place{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMarker+1))
	if err != nil {
		return Place{}, err
	}
	fi2, err := f.Stat()
	if err != nil {
		return Place{}, err
	}
	ino, ok := inode(fi2)
	if !ok || !os.SameFile(fi, fi2) {
		return Place{}, fmt.Errorf("%s changed while it was read: %w", MarkerPath, ErrNotPlace)
	}
	m, err := decodeMarker(data)
	if err != nil {
		return Place{}, err
	}
	return Place{ID: m.ID, MarkIno: ino}, nil
}

// decodeMarker parses a marker's content strictly.
func decodeMarker(data []byte) (marker, error) {
	var m marker
	if len(data) > maxMarker {
		return m, fmt.Errorf("%s: more than %d bytes: %w", MarkerPath, maxMarker, ErrNotPlace)
	}
	if err := strictjson.Decode(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w: %w", MarkerPath, ErrNotPlace, err)
	}
	if m.V != 1 {
		return m, fmt.Errorf("%s: version %d, want 1: %w", MarkerPath, m.V, ErrNotPlace)
	}
	if _, err := ulid.ParseStrict(m.ID); err != nil {
		return m, fmt.Errorf("%s: id %q: %w: %w", MarkerPath, m.ID, ErrNotPlace, err)
	}
	return m, nil
}

// inodeOf returns name's inode number and device under root.
func inodeOf(root *os.Root, name string) (ino, dev uint64, err error) {
	fi, err := root.Stat(name)
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("no inode numbers on this system: %w", ErrNotPlace)
	}
	return st.Ino, uint64(st.Dev), nil //nolint:unconvert // Dev's type differs by platform
}

// inode returns fi's inode number.
func inode(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}

// Places checks that directories are the places runs pinned. It remembers,
// per place, the device on which it last read the place's marker, so that a
// check costs two stats (the directory and the marker, about 2 µs) once the
// marker was read on this host: one inode pair on one device is one file.
// Safe for concurrent use; the zero value is ready.
type Places struct {
	mu   sync.Mutex
	seen map[Place]uint64 // place → device its marker was read on
}

// Check returns nil when the directory dir is place p for host: its inode
// number and its marker's are p's, and the marker holds p's id (a marked
// place), or it is host's own unmarked place; an error wrapping ErrNotPlace
// (or the stat's error, such as fs.ErrNotExist) otherwise.
func (ps *Places) Check(dir string, p Place, host string) error {
	if p.MarkIno == 0 && p.Host != host {
		return fmt.Errorf("location %s: it could not be marked, so only %s holds it: %w", dir, p.Host, ErrNotPlace)
	}
	// Two stats by path: the directory, and the marker as a name in it.
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("location %s: %w: %w", dir, ErrNotPlace, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.IsDir() {
		return fmt.Errorf("location %s: not a directory: %w", dir, ErrNotPlace)
	}
	ino, dev := st.Ino, uint64(st.Dev) //nolint:unconvert // Dev's type differs by platform
	if ino != p.DirIno {
		return fmt.Errorf("location %s: another directory than the run's (inode %d, the run's was %d): moved or replaced, or another machine's: %w", dir, ino, p.DirIno, ErrNotPlace)
	}
	if p.MarkIno == 0 {
		return nil
	}
	mfi, err := os.Lstat(filepath.Join(dir, MarkerPath))
	if err != nil {
		return fmt.Errorf("location %s: its marker %s: %w: %w", dir, MarkerPath, ErrNotPlace, err)
	}
	if mi, ok := inode(mfi); !ok || mi != p.MarkIno {
		return fmt.Errorf("location %s: its marker %s is another file than the run's: %w", dir, MarkerPath, ErrNotPlace)
	}
	ps.mu.Lock()
	d, ok := ps.seen[p]
	ps.mu.Unlock()
	if ok && d == dev {
		return nil // this inode pair on this device had p's id: the same files
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("location %s: %w: %w", dir, ErrNotPlace, err)
	}
	defer root.Close()
	got, err := readMarker(root)
	if err != nil {
		return fmt.Errorf("location %s: %w", dir, err)
	}
	if got.ID != p.ID || got.MarkIno != p.MarkIno {
		return fmt.Errorf("location %s: its marker names location %s, the run's is %s: %w", dir, got.ID, p.ID, ErrNotPlace)
	}
	ps.mu.Lock()
	if ps.seen == nil {
		ps.seen = make(map[Place]uint64)
	}
	ps.seen[p] = dev
	ps.mu.Unlock()
	return nil
}
