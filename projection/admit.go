package projection

import (
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/events"
)

// runIDMax bounds a run id taken from a subject: it is a checkpoint key.
const runIDMax = 128

// admit decodes a message read from the stream and checks that it belongs
// to the subject it was stored on. An error is the reason every fold
// quarantines the message; it never comes from I/O.
func admit(subject string, data []byte) (*events.Commit, error) {
	c, err := events.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	return c, checkEnvelope(subject, c)
}

// checkEnvelope reports whether c is a well-formed commit of the subject:
// a run commit on its own run's subject, a registry commit on its scope's,
// a grant commit on its project's, a sweep on the output subject — each
// with the kinds and events that subject carries. An error wraps
// events.ErrMalformed or [ErrForeign].
func checkEnvelope(subject string, c *events.Commit) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Step < 0 {
		return fmt.Errorf("commit %s: step %d: %w", c.ID, c.Step, events.ErrMalformed)
	}
	for i, e := range c.Events {
		if e == nil {
			return fmt.Errorf("commit %s: event %d is empty: %w", c.ID, i, events.ErrMalformed)
		}
	}
	if run, ok := events.IsRunSubject(subject); ok {
		return checkRunCommit(subject, run, c)
	}
	if c.Run != "" {
		return fmt.Errorf("commit %s of run %q on %s: %w", c.ID, c.Run, subject, ErrForeign)
	}
	if c.Step != 0 {
		return fmt.Errorf("commit %s outside runs names step %d: %w", c.ID, c.Step, events.ErrMalformed)
	}
	scope, onRegistry := strings.CutPrefix(subject, events.RegistrySubject(""))
	project, onGrant := strings.CutPrefix(subject, events.GrantSubject(""))
	switch {
	case onRegistry && scope != "":
		return checkOutside(subject, c, events.KindRegistry, func(e events.Event) bool {
			switch e := e.(type) {
			case events.ToolRegistered:
				return e.Scope == scope && e.Name != ""
			case events.ScopeClosed:
				return e.Scope == scope
			}
			return false
		})
	case onGrant && project != "":
		return checkOutside(subject, c, events.KindGrant, func(e events.Event) bool {
			switch e := e.(type) {
			case events.ApprovalSaved:
				return e.Project == project && e.ID != ""
			case events.GrantRevoked:
				return e.Project == project && e.ID != ""
			}
			return false
		})
	case subject == events.OutputSubject:
		return checkOutside(subject, c, events.KindSweep, func(e events.Event) bool {
			_, ok := e.(events.OutputFileSwept)
			return ok
		})
	}
	return fmt.Errorf("commit %s on %s, a subject the log does not use: %w", c.ID, subject, ErrForeign)
}

// runKinds are the kinds of commit a run subject carries.
var runKinds = map[events.Kind]bool{events.KindStart: true, events.KindCatalog: true, events.KindDecide: true,
	events.KindSettle: true, events.KindStep: true, events.KindResolve: true, events.KindEnd: true, events.KindRecover: true, events.KindTurn: true}

func checkRunCommit(subject, run string, c *events.Commit) error {
	if len(run) > runIDMax || strings.ContainsAny(run, ".*> \x00") {
		return fmt.Errorf("commit %s on %s: not a run id: %w", c.ID, subject, ErrForeign)
	}
	if c.Run != run {
		return fmt.Errorf("commit %s of run %q on %s: %w", c.ID, c.Run, subject, ErrForeign)
	}
	if !runKinds[c.Kind] {
		return fmt.Errorf("commit %s of run %s: kind %q: %w", c.ID, run, c.Kind, events.ErrMalformed)
	}
	for _, e := range c.Events {
		switch e.(type) {
		case events.ToolRegistered, events.ScopeClosed, events.OutputFileSwept:
			return fmt.Errorf("commit %s of run %s holds %s: %w", c.ID, run, e.EventType(), ErrForeign)
		}
	}
	return nil
}

// checkOutside checks a commit outside runs: its kind, and each event the
// subject's fold reads (events of types this build cannot read are skipped
// by every fold, and pass).
func checkOutside(subject string, c *events.Commit, kind events.Kind, belongs func(events.Event) bool) error {
	if c.Kind != kind {
		return fmt.Errorf("commit %s on %s: kind %q, want %q: %w", c.ID, subject, c.Kind, kind, ErrForeign)
	}
	for i, e := range c.Events {
		if _, unknown := e.(events.Unknown); unknown {
			continue
		}
		if !belongs(e) {
			return fmt.Errorf("commit %s on %s: event %d (%s) does not belong here: %w", c.ID, subject, i, e.EventType(), ErrForeign)
		}
	}
	return nil
}

// ownSubject is the subject this host committed c to: its run's, or the
// one its kind and first event name (see commands' commitSubject).
func ownSubject(c *events.Commit) string {
	if c.Run != "" {
		return events.RunSubject(c.Run)
	}
	if len(c.Events) > 0 {
		switch e := c.Events[0].(type) {
		case events.ToolRegistered:
			return events.RegistrySubject(e.Scope)
		case events.ScopeClosed:
			return events.RegistrySubject(e.Scope)
		case events.ApprovalSaved:
			return events.GrantSubject(e.Project)
		case events.GrantRevoked:
			return events.GrantSubject(e.Project)
		}
	}
	if c.Kind == events.KindSweep {
		return events.OutputSubject
	}
	return ""
}
