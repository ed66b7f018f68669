package config

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// Operator is one person (or script) who may sign in to the web app
// (`engine serve --http`): operators.NAME.token_sha256 in the user's file.
// The token itself is never stored: only its SHA-256.
type Operator struct {
	// Name is the operator's name; a reply made in the web app records
	// the principal operator:NAME.
	Name string
	// TokenSHA256 is the SHA-256 of the operator's token.
	TokenSHA256 [sha256.Size]byte
}

// Operators are the operators of the user's file, by name.
type Operators []Operator

// Match returns the operator whose token is token, comparing its hash with
// every operator's in constant time (no early exit, so the time taken says
// nothing about which hash was near).
func (ops Operators) Match(token string) (Operator, bool) {
	sum := sha256.Sum256([]byte(token))
	found, idx := 0, -1
	for i := range ops {
		eq := subtle.ConstantTimeCompare(sum[:], ops[i].TokenSHA256[:])
		found |= eq
		idx = subtle.ConstantTimeSelect(eq, i, idx)
	}
	if found == 0 || token == "" {
		return Operator{}, false
	}
	return ops[idx], true
}

// operatorsSection is operators: {NAME: {token_sha256: HEX}}.
type operatorsSection struct {
	ops Operators
}

// operatorEntry is operators.NAME: the operator's token, as the hex
// SHA-256 that engine operator token prints.
type operatorEntry struct {
	// The hex SHA-256 of the operator's token, as engine operator token
	// prints it.
	TokenSHA256 plain `yaml:"token_sha256"`
}

func (o *operatorsSection) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may declare operators (this is a %s file)", s.source.Label())
	}
	return entries(s, n, func(name string, kn, vn ast.Node) error {
		ss := s.child(name, kn)
		if !validServerName(name) {
			return ss.failKey("operator name %q: want a letter, then up to 31 letters, digits, _ or -", name)
		}
		for _, prev := range o.ops {
			if prev.Name == name {
				return ss.failKey("operator %q is declared twice", name)
			}
		}
		var e operatorEntry
		if err := fields(ss, vn, &e, "unknown key (want token_sha256)"); err != nil {
			return err
		}
		if !e.TokenSHA256.set {
			return ss.fail(vn, "want token_sha256: the hex SHA-256 of the operator's token (engine operator token %s prints it)", name)
		}
		b, err := hex.DecodeString(e.TokenSHA256.text)
		if err != nil || len(b) != sha256.Size {
			return ss.child("token_sha256", nil).fail(vn, "want 64 hex digits: the SHA-256 of the token, not the token")
		}
		op := Operator{Name: name}
		copy(op.TokenSHA256[:], b)
		o.ops = append(o.ops, op)
		return nil
	})
}

// OperatorLine is the line of the user's file that declares operator name
// with token.
func OperatorLine(name, token string) string {
	sum := sha256.Sum256([]byte(token))
	return fmt.Sprintf("operators: {%s: {token_sha256: %q}}", name, hex.EncodeToString(sum[:]))
}

// Operators are the operators the user's file declares, sorted by name;
// none when there is no user's file.
func (l Loader) Operators() (Operators, error) {
	f, err := l.userLayer()
	if err != nil || f == nil {
		return nil, err
	}
	ops := append(Operators(nil), f.operators...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Name < ops[j].Name })
	return ops, nil
}
