package commands_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step"
)

// At commands' boundary the commit boundary's errors are the API's: a lost
// race is the one conflict a caller checks, keeping its cause and message.
func TestTranslateMakesOneConflict(t *testing.T) {
	for _, tc := range []struct {
		reason string
		err    error
		want   error
		code   string
	}{
		{"a lost race is the API's conflict", fmt.Errorf("commit run r: %w", step.ErrConflict), commands.ErrConflict, commands.CodeConflict},
		{"a commit too large is the request's", fmt.Errorf("commit: %w", step.ErrTooLarge), commands.ErrInvalidRequest, commands.CodeInvalidInput},
		{"an API error stays itself", fmt.Errorf("x: %w", commands.ErrRunNotFound), commands.ErrRunNotFound, commands.CodeRunNotFound},
		{"a remote error stays itself", &commands.Error{Code: commands.CodeConflict, Message: "m"}, commands.ErrConflict, commands.CodeConflict},
	} {
		got := commands.Translate(tc.err)
		if !errors.Is(got, tc.want) {
			t.Errorf("%s: %v is not %v", tc.reason, got, tc.want)
		}
		if got.Error() != tc.err.Error() {
			t.Errorf("%s: message %q, want the cause's %q", tc.reason, got, tc.err)
		}
		if !errors.Is(got, errors.Unwrap(tc.err)) && errors.Unwrap(tc.err) != nil {
			t.Errorf("%s: %v lost its cause", tc.reason, got)
		}
		if commands.Code(got) != tc.code {
			t.Errorf("%s: code %q, want %q", tc.reason, commands.Code(got), tc.code)
		}
	}
	if commands.Translate(nil) != nil {
		t.Error("Translate(nil) != nil")
	}
	plain := errors.New("disk full")
	if commands.Translate(plain) != plain || commands.Code(plain) != commands.CodeInternal {
		t.Error("an error without a code is returned as it is, internal")
	}
}
