package events

// TypeModelTurnRecorded is the wire name of [ModelTurnRecorded]. It is part
// of the stored format: never rename it.
const TypeModelTurnRecorded = "ModelTurnRecorded"

// KindTurn is the kind of a commit that records one model turn of a run
// driven by `engine agent` (see [ModelTurnRecorded]).
const KindTurn Kind = "turn"

// ModelSettings are the agent settings of a run driven by a model (engine
// agent), pinned in its [RunStarted]: which provider and model, the
// endpoint, the system text and the user's task. A resume on any host
// reads them from here. The provider's API key is never part of them.
type ModelSettings struct {
	// Provider is "openai", "openai-responses" or "anthropic".
	Provider string `json:"provider"`
	// Model is the provider's model name.
	Model string `json:"model"`
	// BaseURL is the provider's endpoint when it is not the default (an
	// OpenAI-compatible server such as vLLM, llama.cpp or Ollama).
	BaseURL string `json:"base_url,omitempty"`
	// System is the system text sent with every request.
	System string `json:"system,omitempty"`
	// Task is the user's task: the conversation's first message.
	Task string `json:"task"`
	// MaxTokens bounds each model response; 0 for the provider's default.
	MaxTokens int64 `json:"max_tokens,omitempty"`
}

// ModelCall is one tool call a model turn asked for, with the provider's
// own id. Args are the arguments exactly as the model sent them, as text:
// they may not be JSON.
type ModelCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args,omitempty"`
}

// ModelUsage is a turn's token counts as the provider reported them.
type ModelUsage struct {
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
}

// ModelTurnRecorded records one model response of a run: committed before
// its calls are submitted as a step, so a crash after the model answered
// never sends that turn's request again, and the run's conversation is
// rebuilt from the log alone. Turn numbers run from 1; a turn with calls
// is followed by the step of the same number holding them, in this order;
// a turn without calls is the run's last.
type ModelTurnRecorded struct {
	Turn int `json:"turn"`
	// Response is the provider's response id.
	Response string      `json:"response_id,omitempty"`
	Text     string      `json:"text,omitempty"`
	Calls    []ModelCall `json:"calls,omitempty"`
	// Stop is the provider's stop reason ("stop", "tool_calls", "end_turn", …).
	Stop  string     `json:"stop,omitempty"`
	Usage ModelUsage `json:"usage"`
}

// EventType implements [Event].
func (ModelTurnRecorded) EventType() string { return TypeModelTurnRecorded }
