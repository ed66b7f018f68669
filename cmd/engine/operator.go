package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// runOperator is `engine operator token NAME`: a new random token for the
// web app, and the line of the user's file that declares it (its hash).
func runOperator(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("operator", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) != "token" {
		return usageError{"engine operator: want token NAME"}
	}
	name := fs.Arg(1)
	line := config.OperatorLine(name, "x")
	if _, err := config.Parse("(operator)", []byte(line), gate.SourceUser); err != nil {
		return usageError{fmt.Sprintf("engine operator token %q: a name is a letter, then up to 31 letters, digits, _ or -", name)}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("engine operator: %w", err)
	}
	token := "sgop_" + base64.RawURLEncoding.EncodeToString(b)
	fmt.Fprintf(stdout, "token for %s (give it to the operator; it is shown once and not stored):\n  %s\n", name, token)
	fmt.Fprintf(stdout, "add to the user's file (%s), under operators: if it has some already:\n  %s\n", config.UserFile(), config.OperatorLine(name, token))
	return nil
}
