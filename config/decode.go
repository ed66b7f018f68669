package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// value is a configuration type that decodes itself from a node of the YAML
// library's AST: the document is decoded by type, each struct's fields named
// by their yaml tags, and every error it returns is an *Error at a node.
//
// The library's own decoder (yaml.NodeToValue, DecodeFromNode with
// yaml.Strict) does not decide the structure: it names one of several
// unknown keys at random (a map's order), leaves a field unset for a null
// value instead of refusing it, and resolves anchors and aliases, which this
// configuration has never accepted; here the first error in file order is
// the one reported, the same every time.
type value interface {
	decode(s state, n ast.Node) error
}

// state is where a value is being decoded: the file, the layer's source and
// the key path, for errors.
type state struct {
	file   string
	source gate.Source
	// key is the key path, e.g. agents.build.permission.read.
	key string
	// top is the state of the document itself, named (top) in errors.
	top bool
	// keyNode is the node of the key's last segment (nil for the document
	// and a list's items), for errors about the key itself, not its value.
	keyNode ast.Node
}

// child is the state of the value under key seg, written at keyNode.
func (s state) child(seg string, keyNode ast.Node) state {
	if !s.top {
		seg = s.key + "." + seg
	}
	return state{file: s.file, source: s.source, key: seg, keyNode: keyNode}
}

// index is the state of a list's i-th item.
func (s state) index(i int) state {
	return state{file: s.file, source: s.source, key: s.key + "[" + strconv.Itoa(i) + "]"}
}

// fail is an *Error at node n (its line; 0 when it has none) naming the
// state's key.
func (s state) fail(n ast.Node, format string, a ...any) error {
	key := s.key
	if s.top {
		key = "(top)"
	}
	return &Error{File: s.file, Line: line(n), Key: key, Msg: fmt.Sprintf(format, a...)}
}

// failKey is an *Error at the key's own node.
func (s state) failKey(format string, a ...any) error { return s.fail(s.keyNode, format, a...) }

// line is a node's line in the file; 0 when it has no position.
func line(n ast.Node) int {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0
	}
	return n.GetToken().Position.Line
}

// entries calls fn for each key of the mapping n, in file order, with the
// key's text, its node and the value's node. A key must be a plain value.
func entries(s state, n ast.Node, fn func(k string, kn, vn ast.Node) error) error {
	m, ok := n.(ast.MapNode)
	if !ok {
		return s.fail(n, "want a mapping")
	}
	it := m.MapRange()
	for it.Next() {
		k, ok := scalar(it.Key())
		if !ok {
			return s.fail(it.Key(), "a key must be a plain value")
		}
		if err := fn(k, it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return nil
}

// fields decodes the mapping n into the struct v points to: each key, in
// file order, is the yaml tag of a field whose type is a value, and that
// value decodes the key's node. Any other key is an error at the key,
// saying unknown.
func fields(s state, n ast.Node, v any, unknown string) error {
	rv := reflect.ValueOf(v).Elem()
	return entries(s, n, func(k string, kn, vn ast.Node) error {
		ks := s.child(k, kn)
		f, ok := field(rv, k)
		if !ok {
			return ks.failKey("%s", unknown)
		}
		return f.decode(ks, vn)
	})
}

// field is the field of struct rv whose yaml tag is key.
func field(rv reflect.Value, key string) (value, bool) {
	t := rv.Type()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name == key && t.Field(i).IsExported() {
			v, ok := rv.Field(i).Addr().Interface().(value)
			return v, ok
		}
	}
	return nil, false
}

// scalar returns the text of a plain value node.
func scalar(n ast.Node) (string, bool) {
	switch n := n.(type) {
	case *ast.StringNode:
		return n.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.LiteralNode:
		return n.GetToken().Value, true
	}
	return "", false
}
