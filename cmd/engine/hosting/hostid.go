package hosting

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stepgate/stepgate/internal/strictjson"
)

// hostIDFile names the file in a data directory that holds the identity of
// the host that keeps its state there. A restarted host commits under the
// same name, so it recovers what it left in doubt (commands.Engine.Recover
// settles only the steps its own name committed last).
const hostIDFile = "host.json"

// maxHostID bounds a host identity (it is in every commit's envelope).
const maxHostID = 128

// hostID is the content of hostIDFile.
type hostID struct {
	// V is the file's format version, 1.
	V int `json:"v"`
	// Host is the identity.
	Host string `json:"host"`
	// Dir and Machine are where the identity was made: the data
	// directory's absolute path and the machine's host name. A host that
	// finds them changed warns that its directory may be a copy.
	Dir     string `json:"dir,omitempty"`
	Machine string `json:"machine,omitempty"`
}

// ErrHostID is a host identity file that cannot be used.
var ErrHostID = errors.New("unusable host identity")

// decodeHostID parses the content of a host identity file: one JSON object
// {"v":1,"host":NAME}, no other field, a valid name.
func decodeHostID(b []byte) (hostID, error) {
	var id hostID
	if err := strictjson.Decode(b, &id); err != nil {
		return hostID{}, fmt.Errorf("%w: %w", ErrHostID, err)
	}
	if id.V != 1 {
		return hostID{}, fmt.Errorf("%w: version %d, want 1", ErrHostID, id.V)
	}
	if err := checkHostName(id.Host); err != nil {
		return hostID{}, err
	}
	return id, nil
}

// checkHostName accepts a name of 1 to 128 printable ASCII characters
// without spaces.
func checkHostName(name string) error {
	if name == "" || len(name) > maxHostID {
		return fmt.Errorf("%w: host name %q: want 1 to %d characters", ErrHostID, name, maxHostID)
	}
	for i := range len(name) {
		if c := name[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("%w: host name %q: printable ASCII without spaces only", ErrHostID, name)
		}
	}
	return nil
}

// newHostName is the identity a data directory gets on its first start: the
// machine's host name and a random suffix, so two data directories on one
// machine never share an identity.
func newHostName() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	h, _ := os.Hostname()
	h = strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' {
			return '_'
		}
		return r
	}, h)
	if h == "" {
		h = "stepgate"
	}
	if len(h) > maxHostID-9 {
		h = h[:maxHostID-9]
	}
	return h + "-" + hex.EncodeToString(b[:]), nil
}

// readHostID returns the identity stored in dir (Host "" when there is
// none). A file that exists but cannot be read or parsed is an error:
// inventing a new identity would leave the old one's steps unrecovered.
func readHostID(dir string) (hostID, error) {
	path := filepath.Join(dir, hostIDFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return hostID{}, nil
	}
	if err != nil {
		return hostID{}, fmt.Errorf("read this host's identity: %w", err)
	}
	id, err := decodeHostID(b)
	if err != nil {
		return hostID{}, fmt.Errorf("%s: %w (repair the file or start with --host NAME, the name this directory's host had)", path, err)
	}
	return id, nil
}

// here is where an identity made now is made: dir's absolute path and the
// machine's host name.
func here(dir string) (absDir, machine string) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		absDir = dir
	}
	machine, _ = os.Hostname()
	return absDir, machine
}

// storeHostID writes name as dir's identity unless dir has one already, and
// returns the identity dir has: the file is written to a temporary file,
// synced, linked into place (a link never replaces an existing file, so of
// two first starts one wins and both read its name), and the directory is
// synced.
func storeHostID(dir, name string) (string, error) {
	if err := checkHostName(name); err != nil {
		return "", err
	}
	absDir, machine := here(dir)
	b, err := json.Marshal(hostID{V: 1, Host: name, Dir: absDir, Machine: machine})
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("store this host's identity: %w", err)
	}
	tmp, err := os.CreateTemp(dir, hostIDFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("store this host's identity: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	if err := errors.Join(werr, serr, tmp.Close()); err != nil {
		return "", fmt.Errorf("store this host's identity: %w", err)
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, hostIDFile)); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("store this host's identity: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return "", fmt.Errorf("store this host's identity: %w", err)
	}
	stored, err := readHostID(dir)
	if err == nil && stored.Host == "" {
		err = fmt.Errorf("store this host's identity: %s vanished", filepath.Join(dir, hostIDFile))
	}
	return stored.Host, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// hostIdentity returns the name a host on dir commits under. With no
// override it is the identity stored in dir, created on the first start.
// An override (--host) is used for this start; it is stored when dir has
// no identity yet and never replaces one: differing from the stored one, or
// a stored file that cannot be used, is reported in the returned note (the
// steps the stored identity left open are not recovered by this start;
// `engine recover STORED` settles them). Without an override, a file that
// cannot be used is an error, and a file made for another directory or
// machine (a copied data directory?) is reported in the note.
func hostIdentity(dir, override string) (name, note string, err error) {
	if override != "" {
		if err := checkHostName(override); err != nil {
			return "", "", fmt.Errorf("--host: %w", err)
		}
	}
	id, err := readHostID(dir)
	if err != nil && override == "" {
		return "", "", err
	}
	if err != nil {
		return override, fmt.Sprintf("%v; this start commits as --host %s and leaves the file as it is", err, override), nil
	}
	stored := id.Host
	switch {
	case override == "" && stored != "":
		if absDir, machine := here(dir); id.Dir != "" && (id.Dir != absDir || id.Machine != machine) {
			note = fmt.Sprintf("%s was made for %s on %s: if this directory is a copy of a host that still runs, both are host %s and each settles "+
				"the other's open steps at its start; give a copy its own identity (delete %s before its first start, or start it with --host)",
				filepath.Join(dir, hostIDFile), id.Dir, id.Machine, stored, hostIDFile)
		}
		return stored, note, nil
	case override == "":
		if name, err = newHostName(); err != nil {
			return "", "", err
		}
		name, err = storeHostID(dir, name)
		return name, "", err
	case stored == "":
		if _, err := storeHostID(dir, override); err != nil {
			return "", "", err
		}
		return override, "", nil
	case stored != override:
		return override, fmt.Sprintf("--host %s differs from this data directory's identity %s (%s): this start commits as %s and does not recover what %s left open (engine recover %s does)",
			override, stored, filepath.Join(dir, hostIDFile), override, stored, stored), nil
	}
	return override, "", nil
}
