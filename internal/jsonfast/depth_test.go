package jsonfast

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestNestingLimitAgreesWithEncodingJSON holds Valid and Parse to
// encoding/json's nesting limit of 10,000 containers, exactly: the fuzz
// targets cannot reach that depth.
func TestNestingLimitAgreesWithEncodingJSON(t *testing.T) {
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1, maxDepth + 2} {
		for _, shape := range []struct{ open, inner, close string }{
			{"[", "", "]"}, {"[", "1", "]"}, {`{"a":`, "{}", "}"}, {`{"a":`, `"x"`, "}"},
		} {
			in := []byte(strings.Repeat(shape.open, n) + shape.inner + strings.Repeat(shape.close, n))
			want := json.Valid(in)
			t.Run(fmt.Sprintf("%d %s%s", n, shape.open, shape.inner), func(t *testing.T) {
				if got := Valid(in); got != want {
					t.Errorf("Valid = %v, json.Valid = %v", got, want)
				}
				if _, _, got := Parse(in); got != want {
					t.Errorf("Parse ok = %v, json.Valid = %v", got, want)
				}
			})
		}
	}
}
