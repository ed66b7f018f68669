package events_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

// anyString draws strings with quotes, backslashes, control characters,
// multibyte runes and invalid UTF-8.
func anyString(t *rapid.T, label string) string {
	return rapid.OneOf(
		rapid.String(),
		rapid.StringOf(rapid.SampledFrom([]rune{'"', '\\', '\n', '\t', 0, 0x1f, 'é', '💥', '\u2028', 'a', '<', '&'})),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
	).Draw(t, label)
}

func anyStrings(t *rapid.T, label string) []string {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) string { return anyString(t, "s") }), 0, 3).Draw(t, label)
}

// The hand-written encoders of the hot events decode to exactly what
// encoding/json's encoding of the same values decodes to.
func TestHotEventEncodingAgreesWithEncodingJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var rule *events.Rule
		if rapid.Bool().Draw(t, "rule") {
			rule = &events.Rule{Action: anyString(t, "a"), Resource: anyString(t, "r"), Effect: "allow", Source: anyString(t, "src"), TicketTTL: anyString(t, "ttl")}
		}
		var reqs []events.Request
		for range rapid.IntRange(0, 2).Draw(t, "reqs") {
			reqs = append(reqs, events.Request{Action: anyString(t, "ra"), Resources: anyStrings(t, "res"), Save: anyStrings(t, "save"), Ask: rapid.Bool().Draw(t, "ask"), Root: anyString(t, "root")})
		}
		var parts []events.Part
		for range rapid.IntRange(0, 3).Draw(t, "parts") {
			parts = append(parts, events.Part{Type: anyString(t, "pt"), Text: anyString(t, "text"), MIME: anyString(t, "mime"),
				Data: rapid.SliceOf(rapid.Byte()).Draw(t, "data")})
		}
		var paths []events.ResolvedPath
		for range rapid.IntRange(0, 2).Draw(t, "paths") {
			paths = append(paths, events.ResolvedPath{Path: anyString(t, "path"), Real: anyString(t, "real")})
		}
		args, _ := json.Marshal(map[string]string{"text": anyString(t, "arg")})
		evs := []events.Event{
			events.ToolCallRequested{CallID: anyString(t, "id"), Tool: anyString(t, "tool"), Args: args, Identity: anyString(t, "ident")},
			events.PermissionDecided{CallID: anyString(t, "id"), Verdict: "allow", Reason: anyString(t, "reason"), Rule: rule, Requests: reqs,
				Observed: anyString(t, "observed"), Paths: paths},
			events.ToolCallStarted{CallID: anyString(t, "id"), Attempt: rapid.Int().Draw(t, "attempt")},
			events.ToolResultRecorded{CallID: anyString(t, "id"), Parts: parts, IsError: rapid.Bool().Draw(t, "err"), Files: anyStrings(t, "files"),
				Found: anyString(t, "found"), Left: anyString(t, "left"), Sandbox: anySandbox(t)},
			events.StepFinalized{Calls: rapid.Int().Draw(t, "calls")},
		}
		c := &events.Commit{ID: "x", Run: "r", Kind: events.KindStep, At: time.Unix(0, 0).UTC(), Prev: anyString(t, "prev"), Events: evs}
		got, err := events.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := events.Unmarshal(got)
		if err != nil {
			t.Fatalf("hand encoding does not decode: %v\n%s", err, got)
		}
		var prev string
		if ref, _ := json.Marshal(c.Prev); json.Unmarshal(ref, &prev) != nil || dec.Prev != prev {
			t.Fatalf("prev %q decodes as %q, encoding/json's as %q", c.Prev, dec.Prev, prev)
		}
		for i, e := range evs {
			ref, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			want := reflectNew(e)
			if err := json.Unmarshal(ref, want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(deref(want), dec.Events[i]); diff != "" {
				t.Fatalf("%s: (-encoding/json +hand):\n%s", e.EventType(), diff)
			}
		}
	})
}

// The envelope's time is written as time.Time's own JSON, in any zone, and
// a time JSON cannot hold is an error, not a broken commit.
func TestCommitTimeIsTimesJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		at := time.Unix(rapid.Int64Range(-62135596800, 253402300799).Draw(t, "sec"), rapid.Int64Range(0, 999999999).Draw(t, "ns")).
			In(time.FixedZone("z", rapid.IntRange(-23*3600, 23*3600).Draw(t, "offset")))
		want, err := at.MarshalJSON()
		if err != nil {
			t.Skip("not representable")
		}
		got, err := events.Marshal(&events.Commit{ID: "x", Kind: events.KindStep, At: at})
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ At json.RawMessage }
		if err := json.Unmarshal(got, &env); err != nil {
			t.Fatal(err)
		}
		if string(env.At) != string(want) {
			t.Fatalf("at = %s, want %s", env.At, want)
		}
	})
	if _, err := events.Marshal(&events.Commit{ID: "x", Kind: events.KindStep, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Error("a commit in the year 10000 encoded without error")
	}
}

func TestMarshalRefusesInvalidRawJSON(t *testing.T) {
	for _, e := range []events.Event{
		events.ToolCallRequested{CallID: "a", Tool: "echo", Args: json.RawMessage(`{"text":`)},
		events.ToolResultRecorded{CallID: "a", Structured: json.RawMessage(`nope`)},
		events.Unknown{Type: "X", V: 1, Data: json.RawMessage(`{`)},
	} {
		c := &events.Commit{ID: "x", Kind: events.KindStep, Events: []events.Event{e}}
		if _, err := events.Marshal(c); !errors.Is(err, events.ErrMalformed) {
			t.Errorf("%s with invalid JSON: %v, want ErrMalformed", e.EventType(), err)
		}
	}
}

// BenchmarkAppend encodes a w1-shaped commit: one echo call of 200
// printable bytes, allowed, its result and the step's end.
func BenchmarkAppend(b *testing.B) {
	c := benchCommit()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = events.Append(buf[:0], c); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCommit() *events.Commit {
	text := make([]byte, 200)
	for i := range text {
		text[i] = byte(' ' + (i*7)%95)
	}
	args, _ := json.Marshal(map[string]string{"text": string(text)})
	return &events.Commit{ID: "01JDZ0000000000000000000ZZ", Run: "01JDZ0000000000000000000YY", Step: 7, Kind: events.KindStep,
		At: time.Unix(1, 0).UTC(), Host: "bench", Events: []events.Event{
			events.ToolCallRequested{CallID: "c1", Tool: "echo", Args: args, Identity: strings.Repeat("ab", 32)},
			events.PermissionDecided{CallID: "c1", Verdict: "allow", Reason: `allowed by rule * "*" (built-in default)`,
				Rule:     &events.Rule{Action: "*", Resource: "*", Effect: "allow", Source: "default"},
				Requests: []events.Request{{Action: "echo", Resources: []string{"*"}, Save: []string{"*"}}}},
			events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: string(text)}}},
			events.StepFinalized{Calls: 1},
		}}
}

// anySandbox is a result's sandbox record, or none.
func anySandbox(t *rapid.T) *events.SandboxRecord {
	if rapid.Bool().Draw(t, "unsandboxed") {
		return nil
	}
	r := &events.SandboxRecord{Mode: anyString(t, "mode"), Network: anyString(t, "net"), LandlockABI: rapid.IntRange(0, 9).Draw(t, "abi"),
		Namespaces: anyStrings(t, "ns"), Seccomp: rapid.Bool().Draw(t, "seccomp")}
	for range rapid.IntRange(0, 2).Draw(t, "conns") {
		r.Connections = append(r.Connections, events.NetConnection{Form: anyString(t, "form"), Authority: anyString(t, "auth"),
			Verdict: anyString(t, "verdict"), BytesUp: rapid.Int64().Draw(t, "up")})
	}
	return r
}
