package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// ErrSecret is wrapped by every error resolving a secret reference.
var ErrSecret = errors.New("secret reference")

// SecretError is a secret reference that cannot be resolved. It names the
// reference (secret://NAME) and, for a secrets file, the file and line —
// never a secret's value.
type SecretError struct {
	Ref    string // secret://NAME, or the value's bad prefix position
	Reason string
}

// Error says which reference and why.
func (e *SecretError) Error() string { return e.Ref + ": " + e.Reason }

// Unwrap makes every SecretError an ErrSecret.
func (e *SecretError) Unwrap() error { return ErrSecret }

// Secrets resolves secret references: secret://NAME is the environment
// variable NAME, or else NAME in the secrets file the user's file names
// (secrets_file: a YAML or JSON mapping of names to values, refused if its
// group or others may read it). Nothing is cached: each call reads what it
// needs, so a resolved value lives only where the caller keeps it. The zero
// value reads the environment only. Safe for concurrent use.
type Secrets struct {
	// File is the secrets file; "" for none.
	File string
	// LookupEnv reads the environment; nil for os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// NewSecrets resolves from the environment and the secrets file the
// user's layer names (relative to the user's file's directory).
func NewSecrets(layers []*File) *Secrets {
	s := &Secrets{}
	for _, f := range layers {
		if f.source == gate.SourceUser && f.secretsFile != "" {
			s.File = f.secretsFile
			if !filepath.IsAbs(s.File) {
				dir := f.base
				if dir == "" {
					dir = filepath.Dir(f.Path)
				}
				s.File = filepath.Join(dir, s.File)
			}
		}
	}
	return s
}

// Secrets is the resolver the user's file configures (see [NewSecrets]).
func (l Loader) Secrets() (*Secrets, error) {
	f, err := l.userLayer()
	if err != nil || f == nil {
		return &Secrets{}, err
	}
	return NewSecrets([]*File{f}), nil
}

// Resolve replaces every secret reference in v by its secret. The error
// names the first reference that cannot be resolved.
func (s *Secrets) Resolve(ctx context.Context, v string) (string, error) {
	var file map[string]string
	return s.resolve(ctx, v, &file, nil)
}

// resolve is Resolve reading the secrets file at most once into *file.
// Each secret it puts in, and the whole value when it holds more than a
// secret, are appended to *found (when found is not nil).
func (s *Secrets) resolve(ctx context.Context, v string, file *map[string]string, found *[]string) (string, error) {
	refs, err := SecretRefs(v)
	if err != nil {
		return "", &SecretError{Ref: SecretPrefix, Reason: err.Error()}
	}
	if len(refs) == 0 {
		return v, nil
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("resolve secret references: %w", err)
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		val, err := s.lookup(r, file)
		if err != nil {
			return "", err
		}
		b.WriteString(v[last:r.Start])
		b.WriteString(val)
		last = r.End
		if found != nil {
			*found = append(*found, val)
		}
	}
	b.WriteString(v[last:])
	if found != nil && b.Len() > 0 && (len(refs) > 1 || refs[0].Start > 0 || refs[0].End < len(v)) {
		*found = append(*found, b.String())
	}
	return b.String(), nil
}

// lookup is the secret r names: the environment, then the secrets file.
func (s *Secrets) lookup(r SecretRef, file *map[string]string) (string, error) {
	lookupEnv := s.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if v, ok := lookupEnv(r.Name); ok {
		return v, nil
	}
	if s.File == "" {
		return "", &SecretError{Ref: r.String(), Reason: fmt.Sprintf("not set: no environment variable %s and no secrets_file in the user's configuration", r.Name)}
	}
	if *file == nil {
		m, err := readSecretsFile(s.File)
		if err != nil {
			return "", &SecretError{Ref: r.String(), Reason: err.Error()}
		}
		*file = m
	}
	if v, ok := (*file)[r.Name]; ok {
		return v, nil
	}
	return "", &SecretError{Ref: r.String(), Reason: fmt.Sprintf("not set: no environment variable %s and no %s in secrets file %s", r.Name, r.Name, s.File)}
}

// readSecretsFile reads a mapping of names to values. It refuses, at once,
// a file that is not a regular file of at most MaxFileBytes (see
// openRegular: a named pipe does not block it) or that its group or others
// may read, and its errors carry lines, never the file's text.
func readSecretsFile(path string) (map[string]string, error) {
	f, fi, err := openRegular(path, false)
	if err != nil {
		return nil, secretsFileError(path, err)
	}
	defer f.Close()
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("secrets file %s may be read by its group or others (mode %04o): make it readable by you alone (chmod 600)", path, perm)
	}
	data, err := readCapped(f, path)
	if err != nil {
		return nil, secretsFileError(path, err)
	}
	return parseSecrets(path, data)
}

// secretsFileError is err, from opening or reading the secrets file at
// path, as the secrets file's.
func secretsFileError(path string, err error) error {
	var ce *Error
	if errors.As(err, &ce) {
		return fmt.Errorf("secrets file %s: %s", path, ce.Msg)
	}
	return fmt.Errorf("secrets file: %w", err)
}

// parseSecrets decodes the secrets file's text. A YAML error's message
// quotes the text, so only its line is kept.
func parseSecrets(path string, data []byte) (map[string]string, error) {
	tree, err := parseYAML(path, data)
	var ce *Error
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("secrets file %s: line %d: %s", path, ce.Line, ce.Msg)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets file %s: line %d: not valid YAML or JSON", path, syntaxLine(err))
	}
	out := map[string]string{}
	for _, d := range tree.Docs {
		if d.Body == nil {
			continue
		}
		m, ok := d.Body.(ast.MapNode)
		if !ok {
			return nil, fmt.Errorf("secrets file %s: line %d: want a mapping of names to values", path, line(d.Body))
		}
		for it := m.MapRange(); it.Next(); {
			k, kok := scalar(it.Key())
			v, vok := scalar(it.Value())
			if !kok || !vok {
				return nil, fmt.Errorf("secrets file %s: line %d: want a name and a plain value", path, line(it.Key()))
			}
			out[k] = v
		}
	}
	return out, nil
}
