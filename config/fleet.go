package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/strictjson"
)

// ErrBadFleetDoc is a stored fleet document that cannot be used: it does
// not decode, is too large, its digest does not match its content, or its
// content is not a valid user file.
var ErrBadFleetDoc = errors.New("unusable fleet configuration document")

// maxFleetRecord bounds a stored document: MaxFileBytes of content in
// base64 (4/3 of it) and a little metadata.
const maxFleetRecord = MaxFileBytes/3*4 + 8<<10

// FleetDoc is the fleet's user configuration: the user file's bytes as
// `engine config push` stored them in the cluster, and who stored them.
// With --nats every host reads its user layer from it (see [Loader.Fleet]);
// each run pins the Version it started under.
type FleetDoc struct {
	// Version is the document's revision in the bucket (not stored in the
	// document: the bucket gives it); 0 for a document not stored yet.
	Version uint64 `json:"version,omitempty"`
	// Digest is the SHA-256 of Content, hex.
	Digest string `json:"sha256"`
	// PushedBy and PushedAt are who pushed it and when (for people).
	PushedBy string    `json:"pushed_by"`
	PushedAt time.Time `json:"pushed_at"`
	// Content is the user file's text.
	Content []byte `json:"content"`
}

// fleetRecord is a FleetDoc as stored, with its format version.
type fleetRecord struct {
	V        int       `json:"v"`
	Digest   string    `json:"sha256"`
	PushedBy string    `json:"pushed_by"`
	PushedAt time.Time `json:"pushed_at"`
	Content  []byte    `json:"content"`
}

// Digest is the hex SHA-256 of a configuration's bytes, as a FleetDoc
// names its content.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// NewFleetDoc makes the document for the user file read from path: its text
// is validated exactly as a host reads a user file (see [ValidateUserFile])
// and refused whole, with the error's position, on any error.
func NewFleetDoc(path string, data []byte, by string, at time.Time) (*FleetDoc, error) {
	if err := ValidateUserFile(path, data); err != nil {
		return nil, err
	}
	return &FleetDoc{Digest: Digest(data), PushedBy: by, PushedAt: at.UTC(), Content: data}, nil
}

// ValidateUserFile checks text as a host reads it as the user's file: its
// size, its syntax and every key (an [*Error] with file, line and key),
// and that its MCP servers combine with the built-in layer.
func ValidateUserFile(path string, data []byte) error {
	f, err := Parse(path, data, gate.SourceUser)
	if err != nil {
		return err
	}
	if _, err := ResolveMCP([]*File{Builtin(""), f}); err != nil {
		return err
	}
	return nil
}

// Encode returns the stored form of the document.
func (d *FleetDoc) Encode() ([]byte, error) {
	if Digest(d.Content) != d.Digest {
		return nil, fmt.Errorf("%w: its digest is not its content's", ErrBadFleetDoc)
	}
	return json.Marshal(fleetRecord{V: 1, Digest: d.Digest, PushedBy: d.PushedBy, PushedAt: d.PushedAt, Content: d.Content})
}

// DecodeFleetDoc parses a stored document, version its revision in the
// bucket. What is in the bucket is untrusted: more than a document may
// hold is refused unread; the record must be one JSON value of format 1
// with no unknown field, whose digest is its content's and whose content is
// a valid user file (see [ValidateUserFile]). Every refusal wraps
// ErrBadFleetDoc; nothing panics.
func DecodeFleetDoc(data []byte, version uint64) (*FleetDoc, error) {
	if len(data) > maxFleetRecord {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d a document may hold", ErrBadFleetDoc, len(data), maxFleetRecord)
	}
	var r fleetRecord
	if err := strictjson.Decode(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFleetDoc, err)
	}
	switch {
	case r.V != 1:
		return nil, fmt.Errorf("%w: format %d, want 1", ErrBadFleetDoc, r.V)
	case r.Digest != Digest(r.Content):
		return nil, fmt.Errorf("%w: sha256 %q is not its content's", ErrBadFleetDoc, r.Digest)
	}
	d := &FleetDoc{Version: version, Digest: r.Digest, PushedBy: r.PushedBy, PushedAt: r.PushedAt, Content: r.Content}
	if err := ValidateUserFile(d.Name(), d.Content); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadFleetDoc, err)
	}
	return d, nil
}

// Name is how errors and `engine config check` name the document's layer:
// "fleet configuration version N".
func (d *FleetDoc) Name() string { return fmt.Sprintf("fleet configuration version %d", d.Version) }

// layer is the document's content as the user's layer.
func (d *FleetDoc) layer() (*File, error) { return Parse(d.Name(), d.Content, gate.SourceUser) }
