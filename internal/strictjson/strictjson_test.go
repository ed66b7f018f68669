package strictjson

import (
	"errors"
	"testing"
)

type target struct {
	A int `json:"a"`
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok      bool
		trailer bool
	}{
		{`{"a":1}`, true, false},
		{" {\"a\":1}\n", true, false},
		{`{"a":1,"b":2}`, false, false},
		{`{"a":"x"}`, false, false},
		{`{"a":1} {"a":2}`, false, true},
		{`{"a":1}}`, false, true},
		{``, false, false},
	} {
		var v target
		err := Decode([]byte(tc.in), &v)
		if (err == nil) != tc.ok || errors.Is(err, ErrTrailing) != tc.trailer {
			t.Errorf("Decode(%q) = %v; want ok %v, trailing %v", tc.in, err, tc.ok, tc.trailer)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1} 2`, `{"b":1}`, `[`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v target
		_ = Decode(b, &v) // never panics
	})
}
