package step

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// Sentinel errors of the commit boundary.
var (
	// ErrConflict means another writer committed to the same run first: the
	// caller must refresh its view of the run and decide again.
	ErrConflict = errors.New("commit conflict: the run moved on")
	// ErrTooLarge means an encoded commit exceeds the stream's message limit.
	ErrTooLarge = errors.New("commit exceeds the message size limit")
	// ErrNotFound means no message matched a read.
	ErrNotFound = errors.New("no such commit")
)

// Server error codes that mean a commit lost the race for a subject.
const (
	codeWrongLastSequence         = 10071
	codeWrongLastSequenceConstant = 10164
)

// inProcess reports whether err is a clustered stream leader's refusal of a
// message whose subject had another message in process: the constant
// "wrong last sequence" (10164), which names no sequence. The message was
// not stored. (A refusal for the expectation itself is 10071, with the
// subject's last sequence.)
func inProcess(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == codeWrongLastSequenceConstant
}

// translate maps a JetStream publish error to the package's errors, keeping
// the cause. It is the only place that knows the server's codes.
func translate(op string, err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case codeWrongLastSequence, codeWrongLastSequenceConstant:
			return fmt.Errorf("%s: %w: %w", op, ErrConflict, err)
		}
	}
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("%s: %w: %w", op, ErrNotFound, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
