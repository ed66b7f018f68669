package events_test

import "github.com/stepgate/stepgate/events"

// reflectNew returns a pointer to a zero value of e's type.
func reflectNew(e events.Event) any {
	switch e.(type) {
	case events.ToolCallRequested:
		return new(events.ToolCallRequested)
	case events.PermissionDecided:
		return new(events.PermissionDecided)
	case events.ToolCallStarted:
		return new(events.ToolCallStarted)
	case events.ToolResultRecorded:
		return new(events.ToolResultRecorded)
	case events.StepFinalized:
		return new(events.StepFinalized)
	}
	panic("unexpected event type")
}

// deref returns the event a pointer from reflectNew points to.
func deref(p any) events.Event {
	switch p := p.(type) {
	case *events.ToolCallRequested:
		return *p
	case *events.PermissionDecided:
		return *p
	case *events.ToolCallStarted:
		return *p
	case *events.ToolResultRecorded:
		return *p
	case *events.StepFinalized:
		return *p
	}
	panic("unexpected pointer type")
}
