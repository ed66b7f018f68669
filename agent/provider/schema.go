package provider

import (
	"encoding/json"
	"fmt"

	"github.com/stepgate/stepgate/agent/model"
)

// schemaMap is a tool's input schema as a JSON object; an empty schema is
// {"type":"object"}, which every provider accepts for a tool without input.
func schemaMap(t model.Tool) (map[string]any, error) {
	if len(t.Schema) == 0 {
		return map[string]any{"type": "object"}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.Schema, &m); err != nil || m == nil {
		return nil, fmt.Errorf("tool %s: input schema is not a JSON object: %v", t.Name, err)
	}
	return m, nil
}

// argsString is a call's arguments as the OpenAI APIs carry them: a JSON
// text, "{}" when the model sent none.
func argsString(c model.ToolCall) string {
	if len(c.Args) == 0 {
		return "{}"
	}
	return string(c.Args)
}

// argsObject is a call's arguments as Anthropic's tool_use input carries
// them: a JSON object. Arguments that are not one (a model's broken JSON)
// are sent as an empty object, the only input the API accepts.
func argsObject(c model.ToolCall) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(c.Args, &m) != nil || m == nil {
		return json.RawMessage(`{}`)
	}
	return c.Args
}
