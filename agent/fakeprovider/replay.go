package fakeprovider

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Recording is a response body recorded from a real API (or taken from an
// SDK's recorded fixtures), replayed verbatim.
type Recording struct {
	Body []byte
	SSE  bool // a text/event-stream body; otherwise JSON
}

// LoadRecording reads a recorded body; a name ending in ".sse" is a
// stream. The recordings in testdata/recorded name their source:
//
//   - anthropic-message-tool_use.json: anthropic-sdk-go v2.15.0
//     toolrunner/testdata/cassettes/tool_runner_concurrent.yaml, first
//     response (text + tool_use);
//   - anthropic-stream-tool_use.sse: the same SDK's
//     tool_runner_next_streaming.yaml, first response (text deltas, ping,
//     tool_use with input_json_delta pieces, message_delta with usage);
//   - openai-chat-stream-tool_call.sse: openai-go v3.98.0
//     streamaccumulator_test.go, the recorded gpt-4o stream (text, a
//     tool call in argument pieces, usage chunks, [DONE]);
//   - openai-chat-tool_call.json and openai-responses-function_call.json:
//     the OpenAI API reference's function-calling response examples;
//   - openai-responses-stream-function_call.sse: the function-calling
//     guide's streamed events, framed by response.created/completed.
func LoadRecording(path string) (Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Recording{}, fmt.Errorf("load recording: %w", err)
	}
	return Recording{Body: b, SSE: strings.HasSuffix(filepath.Base(path), ".sse")}, nil
}

// Replay answers every request with rec, verbatim, after the server's
// own checks (key, request shape). It is a Config.Replay.
func Replay(rec Recording) func(Request) (Recording, bool) {
	return func(Request) (Recording, bool) { return rec, true }
}

func writeRecording(w http.ResponseWriter, rec Recording) {
	if rec.SSE {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(rec.Body)
}
