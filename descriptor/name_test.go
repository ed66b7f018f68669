package descriptor_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		why  string
		name string
		ok   bool
	}{
		{why: "one letter is enough", name: "a", ok: true},
		{why: "digits, underscore and dash after the first letter", name: "read_file-2", ok: true},
		{why: "MCP names use double underscores", name: "mcp__github__create_issue", ok: true},
		{why: "upper case letters", name: "WebFetch", ok: true},
		{why: "64 characters is the limit", name: "a" + strings.Repeat("b", 63), ok: true},
		{why: "65 characters is too long", name: "a" + strings.Repeat("b", 64)},
		{why: "empty", name: ""},
		{why: "must start with a letter, not a digit", name: "1tool"},
		{why: "must start with a letter, not an underscore", name: "_tool"},
		{why: "must start with a letter, not a dash", name: "-tool"},
		{why: "no dots", name: "fs.read"},
		{why: "no spaces", name: "read file"},
		{why: "no slashes", name: "a/b"},
		{why: "ASCII letters only", name: "lésen"},
		{why: "no trailing newline", name: "read\n"},
	}
	for _, tt := range tests {
		err := descriptor.ValidateName(tt.name)
		if tt.ok {
			if err != nil {
				t.Errorf("%s: ValidateName(%q) = %v, want nil", tt.why, tt.name, err)
			}
			continue
		}
		if !errors.Is(err, descriptor.ErrInvalidName) {
			t.Errorf("%s: ValidateName(%q) = %v, want ErrInvalidName", tt.why, tt.name, err)
			continue
		}
		if got, want := err.Error(), "Invalid tool name: "+tt.name; got != want {
			t.Errorf("%s: error text %q, want %q", tt.why, got, want)
		}
	}
}

var nameRule = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// FuzzValidateName checks the hand-written rule against the regular expression of
// spec/tools.md, and the exact model-visible text of a refusal.
func FuzzValidateName(f *testing.F) {
	for _, s := range []string{"read", "mcp__s__t", "", "9", "a-b_c", strings.Repeat("x", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := descriptor.ValidateName(name)
		if want := nameRule.MatchString(name); (err == nil) != want {
			t.Fatalf("ValidateName(%q) = %v, regexp match = %v", name, err, want)
		}
		if err != nil && (err.Error() != "Invalid tool name: "+name || !errors.Is(err, descriptor.ErrInvalidName)) {
			t.Fatalf("ValidateName(%q) error = %q", name, err)
		}
	})
}
