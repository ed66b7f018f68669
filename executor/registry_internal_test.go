package executor

import (
	"context"
	"errors"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
)

// TestRegisterRevalidatesNames: New cannot build a tool with a bad name, so this
// reaches inside to check that Register still refuses one, and adds nothing.
func TestRegisterRevalidatesNames(t *testing.T) {
	good, err := New("good", "d", func(context.Context, Call, struct{}) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	bad := &Tool{desc: descriptor.Descriptor{Name: "bad name"}}
	var r Registry
	err = r.Register(good, bad)
	if !errors.Is(err, descriptor.ErrInvalidName) {
		t.Errorf("Register = %v, want ErrInvalidName", err)
	}
	if _, ok := r.Lookup("good"); ok {
		t.Error("a failed Register added the valid tool")
	}
}
