package events_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// tester is what agree needs of a *testing.T or a *rapid.T.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
}

// agree checks the fast decoder against encoding/json's way on data:
// Unmarshal gives exactly what UnmarshalReflect gives (the same commit,
// deeply equal down to nil and empty slices and each time's location, or
// the same error), and whatever the fast decoder accepts encoding/json
// accepts with the same commit. It reports whether the fast decoder
// accepted data.
func agree(t tester, data []byte) (fast bool) {
	t.Helper()
	want, wantErr := events.UnmarshalReflect(data)
	got, err := events.Unmarshal(data)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q: Unmarshal error %v, encoding/json's %v", data, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: Unmarshal differs from encoding/json's (-encoding/json +Unmarshal):\n%s", data, cmp.Diff(want, got))
	}
	c, ok := events.UnmarshalFast(data)
	if !ok {
		return false
	}
	if wantErr != nil {
		t.Fatalf("%q: the fast decoder accepts what encoding/json refuses: %v", data, wantErr)
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("%q: the fast decoder differs from encoding/json (-encoding/json +fast):\n%s", data, cmp.Diff(want, c))
	}
	return true
}

// Every commit Marshal writes, with any strings, optional fields and event
// types, is read by the fast decoder (a rebuild never falls back on what
// the engine wrote), as encoding/json reads it.
func TestFastDecodesWhatMarshalWritesProperty(t *testing.T) {
	all := sampleCommit().Events
	rapid.Check(t, func(t *rapid.T) {
		var rule *events.Rule
		if rapid.Bool().Draw(t, "rule") {
			rule = &events.Rule{Action: anyString(t, "a"), Resource: anyString(t, "r"), Effect: "allow", Source: anyString(t, "src"), TicketTTL: anyString(t, "ttl")}
		}
		var reqs []events.Request
		for range rapid.IntRange(0, 2).Draw(t, "reqs") {
			reqs = append(reqs, events.Request{Action: anyString(t, "ra"), Resources: anyStrings(t, "res"), Save: anyStrings(t, "save"), Ask: rapid.Bool().Draw(t, "ask")})
		}
		var parts []events.Part
		if rapid.Bool().Draw(t, "some parts") {
			parts = []events.Part{}
		}
		for range rapid.IntRange(0, 3).Draw(t, "parts") {
			parts = append(parts, events.Part{Type: anyString(t, "pt"), Text: anyString(t, "text"), MIME: anyString(t, "mime"),
				Data: rapid.SliceOf(rapid.Byte()).Draw(t, "data")})
		}
		var paths []events.ResolvedPath
		for range rapid.IntRange(0, 2).Draw(t, "paths") {
			paths = append(paths, events.ResolvedPath{Path: anyString(t, "path"), Real: anyString(t, "real")})
		}
		raw := func(label string) json.RawMessage {
			if !rapid.Bool().Draw(t, label+"?") {
				return nil
			}
			b, _ := json.Marshal(map[string]any{"text": anyString(t, label), "n": rapid.Int().Draw(t, label+"n"), "l": anyStrings(t, label+"l")})
			return b
		}
		evs := []events.Event{
			events.ToolCallRequested{CallID: anyString(t, "id"), Tool: anyString(t, "tool"), Args: raw("args"), Identity: anyString(t, "ident")},
			events.PermissionDecided{CallID: anyString(t, "id"), Verdict: anyString(t, "verdict"), Reason: anyString(t, "reason"), Rule: rule,
				Requests: reqs, Observed: anyString(t, "observed"), Paths: paths},
			events.ToolCallStarted{CallID: anyString(t, "id"), Attempt: rapid.Int().Draw(t, "attempt")},
			events.ToolResultRecorded{CallID: anyString(t, "id"), Parts: parts, Structured: raw("structured"), IsError: rapid.Bool().Draw(t, "err"),
				Files: anyStrings(t, "files"), Found: anyString(t, "found"), Left: anyString(t, "left"), Sandbox: anySandbox(t)},
			events.StepFinalized{Calls: rapid.Int().Draw(t, "calls")},
			events.Unknown{Type: anyString(t, "unknown"), V: rapid.IntRange(0, 3).Draw(t, "v"), Data: raw("udata")},
		}
		evs = append(evs, rapid.SliceOfN(rapid.SampledFrom(all), 0, 3).Draw(t, "others")...)
		evs = rapid.Permutation(evs).Draw(t, "order")[:rapid.IntRange(0, len(evs)).Draw(t, "n")]
		at := time.Unix(rapid.Int64Range(0, 1<<35).Draw(t, "at"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns"))
		if rapid.Bool().Draw(t, "zone") {
			at = at.In(time.FixedZone("", 60*rapid.IntRange(-900, 900).Draw(t, "offset")))
		} else {
			at = at.UTC()
		}
		c := &events.Commit{ID: anyString(t, "cid"), Run: anyString(t, "run"), Step: rapid.Int().Draw(t, "step"),
			Kind: events.Kind(anyString(t, "kind")), At: at, Host: anyString(t, "host"), Prev: anyString(t, "prev"), Events: evs}
		b, err := events.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if !agree(t, b) {
			t.Fatalf("the fast decoder declined what Marshal wrote: %q", b)
		}
	})
}

// The fast decoder skips a member it does not know only when its name has
// no upper-case letter, which it could not if a field's name had one:
// every field of every event is named in lower case.
func TestFieldNamesAreLowerCase(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ == reflect.TypeFor[time.Time]() {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name != strings.ToLower(name) {
				t.Errorf("%s.%s: JSON name %q is not lower case", typ, f.Name, name)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[events.Commit]())
	for _, e := range sampleCommit().Events {
		walk(reflect.TypeOf(e))
	}
	if len(seen) < 20 {
		t.Fatalf("walked %d struct types, want every event's", len(seen))
	}
}

// FuzzUnmarshalFastAgrees holds the fast decoder to encoding/json's way
// (see agree) on any bytes; the seeds are a commit of every event type the
// codec knows, FuzzUnmarshal's, and the table's.
func FuzzUnmarshalFastAgrees(f *testing.F) {
	b, err := events.Marshal(sampleCommit())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, tt := range fastCases {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agree(t, data) })
}
