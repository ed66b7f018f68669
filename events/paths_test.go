package events_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
)

// A verdict stored before paths were recorded decodes with no paths (the
// call is then not checked) and is written back byte for byte; one stored
// with paths keeps them.
func TestPermissionDecidedPathsAreOptional(t *testing.T) {
	old := `{"id":"01JDZ0000000000000000000AA","run":"01JDZ0000000000000000000RR","step":1,"kind":"decide","at":"2026-01-02T03:04:05Z","events":[` +
		`{"type":"PermissionDecided","v":1,"data":{"call_id":"c1","verdict":"confirm","requests":[{"action":"external_directory","resources":["/ext/d/*"],"save":["/ext/d/*"]}]}}]}`
	c, err := events.Unmarshal([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Events[0].(events.PermissionDecided)
	if d.Paths != nil {
		t.Errorf("an old verdict decoded with paths %v", d.Paths)
	}
	b, err := events.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old, string(b)); diff != "" {
		t.Errorf("an old verdict is not written back as it was (-want +got):\n%s", diff)
	}

	d.Paths = []events.ResolvedPath{{Path: "/ext/d/f", Real: "/ext/d/f"}}
	c.Events[0] = d
	if b, err = events.Marshal(c); err != nil {
		t.Fatal(err)
	}
	back, err := events.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d.Paths, back.Events[0].(events.PermissionDecided).Paths); diff != "" {
		t.Errorf("paths did not survive the log (-want +got):\n%s", diff)
	}
}
