package mcpgw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestSameArgs(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{"command":"ls","workdir":"x"}`, `{ "workdir": "x", "command": "ls" }`, true},
		{``, `{}`, true},
		{`null`, `{}`, true},
		{`{"n":1}`, `{"n":1.0}`, false}, // numbers keep their text: conservative
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"a":"x"}`, `{"a":"x","b":null}`, false},
		{`{"a":`, `{"a":`, true}, // unparsable: byte for byte
		{`{"a":`, `{"a": `, false},
		{`{} {}`, `{}`, false}, // two values are not one
	}
	for _, tt := range tests {
		if got := sameArgs(json.RawMessage(tt.a), json.RawMessage(tt.b)); got != tt.same {
			t.Errorf("sameArgs(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// jsonValue generates JSON values as encoding/json decodes them.
func jsonValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kind := rapid.IntRange(0, 5).Draw(t, "kind")
		if depth <= 0 {
			kind %= 4
		}
		switch kind {
		case 0:
			return nil
		case 1:
			return rapid.Bool().Draw(t, "bool")
		case 2:
			return json.Number(fmt.Sprint(rapid.IntRange(-1000, 1000).Draw(t, "int")))
		case 3:
			return rapid.String().Draw(t, "string")
		case 4:
			return rapid.SliceOfN(jsonValue(depth-1), 0, 4).Draw(t, "array")
		default:
			return rapid.MapOfN(rapid.String(), jsonValue(depth-1), 0, 4).Draw(t, "object")
		}
	})
}

// reorder writes v as JSON with object keys in reverse order and extra
// space: the same value, other bytes.
func reorder(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for k, e := range x {
			kb, _ := json.Marshal(k)
			parts = append(parts, string(kb)+" : "+reorder(e))
		}
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
		return "{ " + strings.Join(parts, " , ") + " }"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, reorder(e))
		}
		return "[ " + strings.Join(parts, ", ") + " ]"
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// sameArgs is an equivalence on JSON values that ignores key order and
// spacing, and tells a changed value apart.
func TestSameArgsProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.MapOfN(rapid.String(), jsonValue(3), 0, 5).Draw(t, "args")
		a, _ := json.Marshal(v)
		b := reorder(v)
		if !sameArgs(a, json.RawMessage(b)) || !sameArgs(json.RawMessage(b), a) {
			t.Fatalf("%s and %s: the same value, not sameArgs", a, b)
		}
		v["\x00changed"] = true
		c, _ := json.Marshal(v)
		if sameArgs(a, c) {
			t.Fatalf("%s and %s: different values, sameArgs", a, c)
		}
	})
}

// FuzzSameArgs: sameArgs never panics, is symmetric and reflexive, and a
// value that parses is the same as its re-indented self.
func FuzzSameArgs(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`, ``, `null`, `{"a":`, `[1,2]`, `"x"`, `{} {}`, `{"n":1e400}`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab := sameArgs(json.RawMessage(a), json.RawMessage(b))
		if ab != sameArgs(json.RawMessage(b), json.RawMessage(a)) {
			t.Fatalf("sameArgs(%q, %q) is not symmetric", a, b)
		}
		if !sameArgs(json.RawMessage(a), json.RawMessage(a)) {
			t.Fatalf("sameArgs(%q, itself) is false", a)
		}
		var indented bytes.Buffer
		if json.Indent(&indented, []byte(a), "", "  ") == nil && !sameArgs(json.RawMessage(a), indented.Bytes()) {
			t.Fatalf("%q and its indented self %q are not sameArgs", a, indented.String())
		}
	})
}
