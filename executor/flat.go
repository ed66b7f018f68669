package executor

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// flatDecoder fills a flat struct — exported fields of string, bool and number
// kinds only — from arguments already parsed and validated against its
// schema, without parsing the JSON a second time. Everything it is not sure
// of (a key that is not exactly a field's name, a value of another kind, a
// number its field cannot hold) it declines, and the caller decodes with
// encoding/json instead; TestFlatDecoderAgreesWithEncodingJSON holds the two
// to the same result.
type flatDecoder struct {
	fields map[string]flatField
}

type flatField struct {
	index int
	kind  reflect.Kind
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newFlatDecoder returns a decoder for t, or nil when t is not flat.
func newFlatDecoder(t reflect.Type) *flatDecoder {
	if t.Kind() != reflect.Struct || implementsUnmarshal(t) {
		return nil
	}
	d := &flatDecoder{fields: map[string]flatField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if strings.Contains(opts, "string") || implementsUnmarshal(f.Type) {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		switch k := f.Type.Kind(); k {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			if _, dup := d.fields[name]; dup {
				return nil
			}
			d.fields[name] = flatField{index: i, kind: k}
		default:
			return nil
		}
	}
	return d
}

func implementsUnmarshal(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || p.Implements(jsonUnmarshalerType) ||
		t.Implements(textUnmarshalerType) || p.Implements(textUnmarshalerType)
}

// decode fills dst (a pointer to the struct) from doc; false means "decode
// with encoding/json instead" and leaves dst in an unspecified state.
func (d *flatDecoder) decode(doc any, dst reflect.Value) bool {
	m, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	v := dst.Elem()
	for k, val := range m {
		f, ok := d.fields[k]
		if !ok {
			return false
		}
		if val != nil && !f.set(v, val) { // null leaves a field as it is, as encoding/json does
			return false
		}
	}
	return true
}

// set stores val, a string, bool or json.Number, in field f of struct v;
// false when it does not fit.
func (f flatField) set(v reflect.Value, val any) bool {
	fv := v.Field(f.index)
	switch f.kind {
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return false
		}
		fv.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return false
		}
		fv.SetBool(b)
	default:
		// Numbers are read from their digits as encoding/json reads
		// them: the same parse, the same bit size, the same overflow test.
		num, ok := val.(json.Number)
		if !ok {
			return false
		}
		switch f.kind {
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(string(num), fv.Type().Bits())
			if err != nil || fv.OverflowFloat(n) {
				return false
			}
			fv.SetFloat(n)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(string(num), 10, 64)
			if err != nil || fv.OverflowInt(n) {
				return false
			}
			fv.SetInt(n)
		default:
			n, err := strconv.ParseUint(string(num), 10, 64)
			if err != nil || fv.OverflowUint(n) {
				return false
			}
			fv.SetUint(n)
		}
	}
	return true
}
