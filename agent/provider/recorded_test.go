package provider_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
)

// Recorded responses (see fakeprovider.LoadRecording for where each comes
// from), replayed verbatim by the fake and decoded by the providers.
func TestRecordedExchanges(t *testing.T) {
	cases := []struct {
		file   string
		api    string
		stream bool
		want   model.Turn
	}{
		{"anthropic-message-tool_use.json", provider.Anthropic, false, model.Turn{
			ID:    "msg_01GhukHZbus69MS8zCp3tqTa",
			Text:  "I'd be happy to check the weather for San Francisco, New York, and London for you. I'll need to look up each city individually.",
			Calls: []model.ToolCall{{ID: "toolu_019dfQh1VSo4ykF3MUFvGpMg", Name: "get_weather", Args: []byte(`{"city":"San Francisco"}`)}},
			Stop:  "tool_use", Usage: model.Usage{InputTokens: 414, OutputTokens: 85},
		}},
		{"anthropic-stream-tool_use.sse", provider.Anthropic, true, model.Turn{
			ID:    "msg_01P7nF1bmxyzFZjF8zwbUDBM",
			Text:  "I'd be happy to check the weather in San Francisco for you. Let me get that information for you right away.",
			Calls: []model.ToolCall{{ID: "toolu_017QoD96fYwGzCWvLfaPADWg", Name: "get_weather", Args: []byte(`{"city": "San Francisco"}`)}},
			Stop:  "tool_use", Usage: model.Usage{InputTokens: 394, OutputTokens: 79},
		}},
		{"openai-chat-tool_call.json", provider.OpenAI, false, model.Turn{
			ID:    "chatcmpl-abc123",
			Calls: []model.ToolCall{{ID: "call_abc123", Name: "get_current_weather", Args: []byte("{\n\"location\": \"Boston, MA\"\n}")}},
			Stop:  "tool_calls", Usage: model.Usage{InputTokens: 82, OutputTokens: 17},
		}},
		{"openai-chat-stream-tool_call.sse", provider.OpenAI, true, model.Turn{
			ID:    "chatcmpl-A3Tguz3LSXTHBTY2NAPBCSyfBltxF",
			Text:  santorini,
			Calls: []model.ToolCall{{ID: "call_FXoAjBUMcVv1k40fficJ9cSs", Name: "get_weather", Args: []byte(`{"location":"Santorini, Greece"}`)}},
			// The recording ends with two usage chunks; the last one is
			// the usage of the stream.
			Stop: "tool_calls", Usage: model.Usage{InputTokens: 0, OutputTokens: 50},
		}},
		{"openai-responses-function_call.json", provider.OpenAIResponses, false, model.Turn{
			ID:    "resp_67ca09c5efe0819096d0511c92b8c890096610f474011cc0",
			Calls: []model.ToolCall{{ID: "call_unLAR8MvFNptuiZK6K6HCy5k", Name: "get_current_weather", Args: []byte(`{"location":"Boston, MA","unit":"celsius"}`)}},
			Stop:  "completed", Usage: model.Usage{InputTokens: 291, OutputTokens: 23},
		}},
		{"openai-responses-stream-function_call.sse", provider.OpenAIResponses, true, model.Turn{
			ID:    "resp_1234xyz",
			Calls: []model.ToolCall{{ID: "call_2345abc", Name: "get_weather", Args: []byte(`{"location":"Paris, France"}`)}},
			Stop:  "completed", Usage: model.Usage{InputTokens: 57, OutputTokens: 18},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rec, err := fakeprovider.LoadRecording(filepath.Join("..", "fakeprovider", "testdata", "recorded", c.file))
			if err != nil {
				t.Fatal(err)
			}
			srv := fakeprovider.New(fakeprovider.Config{APIKey: testKey, Replay: fakeprovider.Replay(rec)})
			url, stop, err := srv.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			turn, seen := next(t, dial(t, c.api, url, testKey), model.Conversation{Task: "What's the weather?"}, c.stream)
			if diff := cmp.Diff(c.want, turn); diff != "" {
				t.Errorf("turn (-want +got):\n%s", diff)
			}
			if seen != c.want.Text {
				t.Errorf("OnText received %q, want %q", seen, c.want.Text)
			}
		})
	}
}

// santorini is the text of the recorded gpt-4o stream.
const santorini = "Let's take a journey to the beautiful island of Santorini in Greece.\n\nSantorini is a gem in the Aegean Sea, known for its stunning sunsets, white-washed buildings, and crystal-clear waters. The island's rugged landscape is the result of a volcanic eruption that took place around 3,600 years ago, which gave Santorini its distinct caldera. When you visit the island, you can't miss the picturesque town of Oia, perched high on the cliffs with its narrow streets, blue-domed churches, and panoramic views of the sea. Fira, the island's capital, is buzzing with life, offering a variety of shops, restaurants, and cafes. Don't forget to explore the archaeological site of Akrotiri, an ancient Minoan city preserved in volcanic ash, often referred to as the \"Pompeii of the Aegean.\"\n\nNow, let's check the weather in Santorini."
