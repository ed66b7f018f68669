package events_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/events"
)

func sampleCommit() *events.Commit {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return &events.Commit{
		ID: "01JDZ0000000000000000000AA", Run: "01JDZ0000000000000000000RR", Step: 1,
		Kind: events.KindStep, At: at, Host: "h1", Prev: "01JDZ0000000000000000000A9",
		Events: []events.Event{
			events.RunStarted{Agent: "build", Location: "/w", Project: "p",
				Rules:     []events.Rule{{Action: "*", Resource: "*", Effect: "allow", Source: "default"}},
				Narrowing: "configured", Limits: events.OutputLimits{MaxLines: 2000, MaxBytes: 51200},
				PolicyDigest: "d", EngineVersion: "dev"},
			events.CatalogAdvertised{Fingerprint: "f", Tools: []events.AdvertisedTool{{Name: "echo", Identity: "i"}}},
			events.ToolCallRequested{CallID: "c1", Tool: "echo", Args: json.RawMessage(`{"text":"hi"}`), Identity: "i"},
			events.PermissionDecided{CallID: "c1", Verdict: events.VerdictBlock, Reason: "no",
				Rule:     &events.Rule{Action: "echo", Resource: "*", Effect: "deny", Source: "run"},
				Requests: []events.Request{{Action: "echo", Resources: []string{"hi"}, Save: []string{"*"}}}, Observed: "sha256:ab",
				Paths: []events.ResolvedPath{{Path: "ext/d", Real: "/w/ext/d"}, {Path: ".", Real: "/w"}}},
			events.ToolCallStarted{CallID: "c1", Attempt: 1},
			events.ToolResultRecorded{CallID: "c1", Parts: []events.Part{{Type: "text", Text: "hi"}}, IsError: true},
			events.StepFinalized{Calls: 1},
			events.RunEnded{Cause: events.CauseCompleted},
			events.TicketIssued{ID: "T1", CallID: "c1", Tool: "echo", Identity: "i", ArgsSHA: "a", Kind: events.TicketPermission,
				Requests: []events.Request{{Action: "echo", Resources: []string{"hi"}}, {Action: "edit", Resources: []string{"src/a.go"}, Save: []string{"*"}, Ask: true, Root: "/w"}}, PolicySHA: "p", Deadline: &at, Project: "p1"},
			events.StepAwaiting{Tickets: []string{"T1"}},
			events.TicketResolved{Ticket: "T1", CallID: "c1", Reply: events.ReplyAlways, Approved: true, Principal: "ops", Answers: json.RawMessage(`["a"]`)},
			events.ApprovalSaved{ID: "G1", Project: "p1", Action: "echo", Resource: "*", Principal: "ops", Ticket: "T1"},
			events.GrantRevoked{ID: "G1", Project: "p1", Principal: "ops"},
			events.OutputFileStored{Path: "/d/tool-output/tool_X", Bytes: 123, SHA256: "s", Expires: at},
			events.OutputFileSwept{Paths: []string{"/d/tool-output/tool_X"}},
			events.ToolRegistered{Scope: "S", Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), Action: "t", Effect: "read_only", Identity: "i"},
			events.ScopeClosed{Scope: "S"},
			events.StateCommand{CallID: "c1", Key: "todos", Value: json.RawMessage(`[{"content":"x","status":"pending","priority":"high"}]`)},
			events.ModelTurnRecorded{Turn: 1, Response: "chatcmpl-1", Text: "I will write it.", Stop: "tool_calls",
				Calls: []events.ModelCall{{ID: "call_1", Name: "write", Args: `{"filePath":"a.txt"`}, {ID: "call_2", Name: "bash", Args: `{}`}},
				Usage: events.ModelUsage{InputTokens: 120, OutputTokens: 30}},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	want := sampleCommit()
	b, err := events.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := events.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, e := range want.Events {
		if events.EventVersion(e) != 1 {
			t.Errorf("%s: version %d, want 1", e.EventType(), events.EventVersion(e))
		}
	}
}

func TestUnknownEventsAreKept(t *testing.T) {
	tests := []struct {
		why  string
		in   string
		want events.Event
	}{
		{"a type this build has never heard of", `{"type":"FutureThing","v":1,"data":{"x":1}}`,
			events.Unknown{Type: "FutureThing", V: 1, Data: json.RawMessage(`{"x":1}`)}},
		{"a known type at a newer version", `{"type":"RunEnded","v":9,"data":{"cause":"x"}}`,
			events.Unknown{Type: "RunEnded", V: 9, Data: json.RawMessage(`{"cause":"x"}`)}},
		{"a known type without a version", `{"type":"RunEnded","data":{}}`,
			events.Unknown{Type: "RunEnded", V: 0, Data: json.RawMessage(`{}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			raw := `{"id":"x","kind":"step","at":"2026-11-30T00:00:00Z","events":[` + tt.in + `]}`
			c, err := events.Unmarshal([]byte(raw))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff([]events.Event{tt.want}, c.Events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			// Re-encoding keeps the unknown event byte for byte in meaning.
			again, err := events.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := events.Unmarshal(again)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c, c2); diff != "" {
				t.Errorf("re-encode (-first +second):\n%s", diff)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	for _, in := range []string{``, `{`, `[]`, `{"events":[{"type":"RunEnded","v":1,"data":[1]}]}`} {
		if _, err := events.Unmarshal([]byte(in)); !errors.Is(err, events.ErrMalformed) {
			t.Errorf("Unmarshal(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

func TestValidate(t *testing.T) {
	c := sampleCommit()
	if err := c.Validate(); err != nil {
		t.Errorf("Validate(valid) = %v", err)
	}
	c.Events = nil
	if err := c.Validate(); !errors.Is(err, events.ErrMalformed) {
		t.Errorf("Validate(no events) = %v, want ErrMalformed", err)
	}
}

func TestIDs(t *testing.T) {
	src := events.NewIDSource(nil)
	at := time.Now()
	a, b := src.New(at), src.New(at)
	if a == b || !events.ValidID(a) || !events.ValidID(b) {
		t.Errorf("ids %q %q: want two distinct valid ULIDs", a, b)
	}
	for _, bad := range []string{"", "x", "run.1", "01jdz0000000000000000000aa"} {
		if events.ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

func TestSubjects(t *testing.T) {
	run, ok := events.IsRunSubject(events.RunSubject("R1"))
	if !ok || run != "R1" {
		t.Errorf("IsRunSubject(RunSubject(R1)) = %q, %v", run, ok)
	}
	if _, ok := events.IsRunSubject(events.RegistrySubject("s")); ok {
		t.Error("a registry subject is not a run subject")
	}
}

func FuzzUnmarshal(f *testing.F) {
	b, _ := events.Marshal(sampleCommit())
	f.Add(b)
	f.Add([]byte(`{"id":"x","kind":"step","events":[{"type":"Nope","v":3}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := events.Unmarshal(data)
		if err != nil {
			if !errors.Is(err, events.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if _, err := events.Marshal(c); err != nil {
			t.Fatalf("decoded commit does not re-encode: %v", err)
		}
	})
}

func TestValidIDAgreesWithULID(t *testing.T) {
	src := events.NewIDSource(nil)
	for range 1000 {
		if id := src.New(time.Now()); !events.ValidID(id) {
			t.Fatalf("ValidID(%q) = false for a fresh id", id)
		}
	}
	for _, bad := range []string{"8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01JDZ0000000000000000000AI", "01JDZ0000000000000000000A", "01JDZ0000000000000000000A.", "01JDZ0000000000000000000UU"} {
		if events.ValidID(bad) {
			t.Errorf("ValidID(%q) = true", bad)
		}
	}
}

// A RunStarted is written at version 1 without MCP pins (an older build
// reads it) and at 2 with them (an older build, which would show every MCP
// tool, does not: it keeps the event as Unknown).
func TestRunStartedVersions(t *testing.T) {
	for _, tt := range []struct {
		pins []events.MCPServerPin
		want string
	}{
		{nil, `"type":"RunStarted","v":1`},
		{[]events.MCPServerPin{{Server: "test", Allow: [][]string{{"echo"}}, TicketTTLMs: 1000}}, `"type":"RunStarted","v":2`},
	} {
		c := &events.Commit{ID: "01JDZ0000000000000000000AA", Run: "01JDZ0000000000000000000RR", Kind: events.KindStart,
			Events: []events.Event{events.RunStarted{Agent: "build", Location: "/w", Project: "p", MCP: tt.pins}}}
		b, err := events.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tt.want) {
			t.Errorf("%s: want %s", b, tt.want)
		}
		got, err := events.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.Events, got.Events); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
	}
}
