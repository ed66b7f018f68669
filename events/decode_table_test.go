package events_test

import (
	"strings"
	"testing"
)

// step wraps events (JSON, comma separated) in a run commit's envelope.
func step(evs string) string {
	return `{"id":"01C","run":"01R","step":3,"kind":"step","at":"2026-12-01T10:00:00.5Z","host":"h","prev":"01B","events":[` + evs + `]}`
}

const (
	echoCall   = `{"type":"ToolCallRequested","v":1,"data":{"call_id":"c1","tool":"echo","args":{"text":"hi"},"identity":"i"}}`
	echoAllow  = `{"type":"PermissionDecided","v":1,"data":{"call_id":"c1","verdict":"allow","reason":"r","rule":{"action":"*","resource":"*","effect":"allow","source":"default"},"requests":[{"action":"echo","resources":["hi"],"save":["*"]}]}}`
	echoResult = `{"type":"ToolResultRecorded","v":1,"data":{"call_id":"c1","parts":[{"type":"text","text":"hi"}]}}`
	finalized  = `{"type":"StepFinalized","v":1,"data":{"calls":1}}`
)

// fastCases are inputs the fast decoder reads (fast) or declines, for the
// table test and as fuzz seeds. Either way Unmarshal must give what
// encoding/json gives.
var fastCases = []struct {
	why  string
	in   string
	fast bool
}{
	{"an echo step", step(echoCall + "," + echoAllow + "," + echoResult + "," + finalized), true},
	{"white space everywhere", " \n{ \"id\" : \"x\" ,\t\"kind\":\"step\" , \"events\" : [ { \"type\" : \"StepFinalized\" , \"v\" : 1 , \"data\" : { \"calls\" : 2 } } ] }\r\n", true},
	{"data before type and version", step(`{"data":{"calls":1},"v":1,"type":"StepFinalized"},{"v":1,"data":{"call_id":"c","attempt":2},"type":"ToolCallStarted"}`), true},
	{"null leaves a string, an int, a bool and a time zero", `{"id":null,"step":null,"at":null,"events":[{"type":"ToolResultRecorded","v":1,"data":{"call_id":null,"is_error":null,"parts":[]}}]}`, true},
	{"null and empty slices", step(`{"type":"PermissionDecided","v":1,"data":{"requests":[{"resources":null,"save":[]}],"paths":null}},{"type":"ToolResultRecorded","v":1,"data":{"parts":null,"files":[]}}`), true},
	{"null elements", step(`{"type":"PermissionDecided","v":1,"data":{"requests":[null,{"resources":[null,"a"]}],"paths":[null]}},{"type":"ToolResultRecorded","v":1,"data":{"parts":[null]}}`), true},
	{"a null rule, null raw values", step(`{"type":"PermissionDecided","v":1,"data":{"rule":null}},{"type":"ToolCallRequested","v":1,"data":{"args":null}},{"type":"ToolResultRecorded","v":1,"data":{"structured":null}}`), true},
	{"unknown names at every level: the general path, which skips them", `{"id":"x","extra":{"a":[1,{"b":null}]},"events":[{"type":"PermissionDecided","v":1,"more":true,"data":{"new_field":"x","rule":{"later":1,"action":"a"},"requests":[{"x":[],"action":"b"}]}}]}`, false},
	{"types and versions this build does not read", step(`{"type":"FutureThing","v":1,"data":{"x":1}},{"type":"StepFinalized","v":2,"data":{"calls":"many"}},{"type":"StepFinalized","data":{}},{"type":"Nope","v":3},{"type":"X","v":1,"data":null},{"type":"StepFinalized","v":1}`), true},
	{"no events, null events, an empty list", `{"id":"a"}`, true},
	{"null events", `{"id":"a","events":null}`, true},
	{"empty events", `{"id":"a","events":[]}`, true},
	{"a null event", step(`null,` + finalized), true},
	{"times with offsets and fractions", `{"id":"a","at":"2026-12-01T10:00:00.123456789+05:30","events":[{"type":"OutputFileStored","v":1,"data":{"expires":"2026-12-01T10:00:00-08:00"}}]}`, true},
	{"escapes, invalid UTF-8, surrogates", step(`{"type":"ToolCallRequested","v":1,"data":{"call_id":"a\"b\\c\u00e9\ud83d\ude00\ud800x\/","tool":"` + "\xff\xfe" + `","identity":"é"}}`), true},
	{"base64 with a line break", step(`{"type":"ToolResultRecorded","v":1,"data":{"parts":[{"type":"image","mime":"image/png","data":"aGk=\n"},{"data":""},{"data":null}]}}`), true},
	{"a start", `{"id":"a","run":"r","kind":"start","events":[{"type":"RunStarted","v":1,"data":{"agent":"a","location":"/w","project":"p","rules":[{"action":"*","resource":"*","effect":"allow","source":"default"},null],"narrowing":"configured","limits":{"max_lines":2000,"max_bytes":51200},"policy_sha256":"d","engine_version":"dev","ticket_ttl_ms":9007199254740993,"forked_from":{"run":"r","step":2,"commit":"c"}}},{"type":"CatalogAdvertised","v":1,"data":{"fingerprint":"f","tools":[{"name":"echo","identity":"i"},{}]}}]}`, true},
	{"a start with its principal", `{"id":"a","events":[{"type":"RunStarted","v":1,"data":{"agent":"a","project":"p","principal":"nats:AGENT_A/agent-a","limits":{}}}]}`, true},
	{"a start without rules, forked_from null", `{"id":"a","events":[{"type":"RunStarted","v":1,"data":{"rules":null,"forked_from":null,"limits":{}}},{"type":"CatalogAdvertised","v":1,"data":{"tools":[]}}]}`, true},
	{"the other types through encoding/json", step(`{"type":"TicketIssued","v":1,"data":{"id":"t","deadline":"2026-12-01T00:00:00Z"}},{"type":"StateCommand","v":1,"data":{"call_id":"c","key":"todos","value":[]}},{"type":"ApprovalSaved","v":1,"data":{"id":"g"}}`), true},
	{"a model turn through encoding/json", step(`{"type":"ModelTurnRecorded","v":1,"data":{"turn":2,"response_id":"r","text":"hi","calls":[{"id":"c","name":"bash","args":"{\"command\":"}],"stop":"tool_calls","usage":{"input_tokens":5,"output_tokens":7}}}`), true},
	{"a start with the agent's model settings: the general path", `{"id":"a","events":[{"type":"RunStarted","v":1,"data":{"agent":"build","limits":{},"model":{"provider":"openai","model":"m","task":"t"}}}]}`, false},
	{"a model turn whose turn is not a number", step(`{"type":"ModelTurnRecorded","v":1,"data":{"turn":"2"}}`), false},
	{"a model turn whose calls' args are not text", step(`{"type":"ModelTurnRecorded","v":1,"data":{"turn":1,"calls":[{"id":"c","args":{}}]}}`), false},
	{"arguments nested to encoding/json's limit", step(`{"type":"ToolCallRequested","v":1,"data":{"args":` + strings.Repeat("[", 9996) + strings.Repeat("]", 9996) + `}}`), true},
	{"unknown data nested to the limit", step(`{"type":"Future","v":1,"data":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}`), true},
	{"an unknown member nested to the limit: the general path", `{"id":"a","later":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, false},
	{"int extremes", `{"id":"a","step":-9223372036854775808,"events":[{"type":"ToolCallStarted","v":1,"data":{"attempt":9223372036854775807}},{"type":"StepFinalized","v":1,"data":{"calls":-0}}]}`, true},

	{"arguments nested past the limit", step(`{"type":"ToolCallRequested","v":1,"data":{"args":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}`), false},
	{"unknown data nested past the limit", step(`{"type":"Future","v":1,"data":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`), false},
	{"an unknown member nested past the limit", `{"id":"a","later":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, false},
	{"an int out of range", `{"id":"a","step":9223372036854775808}`, false},
	{"a name twice (encoding/json keeps the last)", `{"id":"a","id":"b"}`, false},
	{"a nested name twice (encoding/json merges)", step(`{"type":"PermissionDecided","v":1,"data":{"rule":{"action":"a"},"rule":{"effect":"e"}}}`), false},
	{"a name in upper case (encoding/json ignores case)", step(`{"type":"ToolCallStarted","v":1,"data":{"Call_ID":"c"}}`), false},
	{"an unknown name in upper case", `{"id":"a","Other":1}`, false},
	{"an escaped name", `{"i\u0064":"a"}`, false},
	{"a non-ASCII name", `{"idé":"a"}`, false},
	{"a fraction for an int", `{"id":"a","step":1.0}`, false},
	{"an exponent for an int", `{"id":"a","step":1e2}`, false},
	{"a string for an int", `{"id":"a","step":"1"}`, false},
	{"a number for a string", `{"id":1}`, false},
	{"a time with an escape", `{"id":"a","at":"2026-12-01T10:00:00\u005a"}`, false},
	{"not a time", `{"id":"a","at":"yesterday"}`, false},
	{"a start of version 2 pinning MCP servers: its payload the general way", `{"id":"a","events":[{"type":"RunStarted","v":2,"data":{"agent":"build","mcp":[{"server":"s","allow":[["a*"]],"ticket_ttl_ms":60000}]}}]}`, true},
	{"a start of version 1 with MCP pins (a field the hand decoder was not taught)", `{"id":"a","events":[{"type":"RunStarted","v":1,"data":{"agent":"build","mcp":[{"server":"s"}]}}]}`, false},
	{"a null struct (encoding/json leaves it)", `{"id":"a","events":[{"type":"RunStarted","v":1,"data":{"limits":null}}]}`, false},
	{"a payload that is not an object", step(`{"type":"StepFinalized","v":1,"data":[1]}`), false},
	{"a null payload of a known type", step(`{"type":"StepFinalized","v":1,"data":null}`), false},
	{"another type's bad payload", step(`{"type":"RunEnded","v":1,"data":{"cause":1}}`), false},
	{"bad base64", step(`{"type":"ToolResultRecorded","v":1,"data":{"parts":[{"data":"!!"}]}}`), false},
	{"arguments that are not JSON", step(`{"type":"ToolCallRequested","v":1,"data":{"args":{"a":}}}`), false},
	{"trailing bytes", `{"id":"a"} x`, false},
	{"a null commit", `null`, false},
	{"an array", `[]`, false},
	{"nothing", ``, false},
	{"cut short", step(echoCall)[:60], false},
}

func TestUnmarshalFastTable(t *testing.T) {
	for _, tt := range fastCases {
		t.Run(tt.why, func(t *testing.T) {
			if got := agree(t, []byte(tt.in)); got != tt.fast {
				t.Errorf("fast decoder accepted = %v, want %v", got, tt.fast)
			}
		})
	}
}
