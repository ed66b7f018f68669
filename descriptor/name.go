package descriptor

import "fmt"

// MaxNameLen is the longest tool name the name rule accepts.
const MaxNameLen = 64

// ValidateName reports whether name matches ^[A-Za-z][A-Za-z0-9_-]{0,63}$.
// A failure wraps ErrInvalidName and reads exactly "Invalid tool name: <name>",
// the text the model sees.
func ValidateName(name string) error {
	if !validName(name) {
		return fmt.Errorf("%w: %s", ErrInvalidName, name)
	}
	return nil
}

// validName is the name rule written out by hand: it runs on every registration and
// every call, and FuzzValidateName checks it against the regular expression.
func validName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
