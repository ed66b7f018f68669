package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// turnEvent is turn n as the log records it.
func turnEvent(n int, t model.Turn) events.ModelTurnRecorded {
	e := events.ModelTurnRecorded{Turn: n, Response: t.ID, Text: t.Text, Stop: t.Stop,
		Usage: events.ModelUsage{InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens}}
	for _, c := range t.Calls {
		e.Calls = append(e.Calls, events.ModelCall{ID: c.ID, Name: c.Name, Args: string(c.Args)})
	}
	return e
}

// modelTurn is a recorded turn as the model gave it.
func modelTurn(e events.ModelTurnRecorded) model.Turn {
	t := model.Turn{ID: e.Response, Text: e.Text, Stop: e.Stop,
		Usage: model.Usage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens}}
	for _, c := range e.Calls {
		var args json.RawMessage
		if c.Args != "" {
			args = json.RawMessage(c.Args)
		}
		t.Calls = append(t.Calls, model.ToolCall{ID: c.ID, Name: c.Name, Args: args})
	}
	return t
}

// withIDs gives every call of t without an id one of its own (a local
// server may send none), unique within the turn, before it is recorded.
func withIDs(n int, t model.Turn) model.Turn {
	seen := map[string]bool{}
	for _, c := range t.Calls {
		seen[c.ID] = true
	}
	for i := range t.Calls {
		if t.Calls[i].ID != "" {
			continue
		}
		id := fmt.Sprintf("call_%d_%d", n, i+1)
		for seen[id] {
			id += "x"
		}
		seen[id] = true
		t.Calls[i].ID = id
	}
	return t
}

// stepCalls are a turn's calls as one step submits them: the provider's
// ids, in model order. Arguments that are not JSON go as a JSON string of
// their text (as the engine records them), and the gate answers them as
// invalid input.
func stepCalls(t model.Turn) []client.CallRequest {
	out := make([]client.CallRequest, len(t.Calls))
	for i, c := range t.Calls {
		args := c.Args
		if len(args) > 0 && !json.Valid(args) {
			args, _ = json.Marshal(string(c.Args))
		}
		out[i] = client.CallRequest{ID: c.ID, Tool: c.Name, Args: args}
	}
	return out
}

// outcomeResults are a final step's results as the model reads them, in
// the turn's order.
func outcomeResults(t model.Turn, out *client.StepOutcome) ([]model.Result, error) {
	by := make(map[string]client.CallResult, len(out.Results))
	for _, r := range out.Results {
		by[r.CallID] = r
	}
	res := make([]model.Result, len(t.Calls))
	for i, c := range t.Calls {
		r, ok := by[c.ID]
		if !ok {
			return nil, fmt.Errorf("step %d of run %s: no result for call %s", out.Step, out.Run, c.ID)
		}
		res[i] = model.Result{CallID: c.ID, Name: c.Name, Content: r.Content, IsError: r.IsError}
	}
	return res, nil
}

// recordedContent is a recorded result's text as the engine answers it in
// a step's outcome (commands' callResult): its text parts, one a line;
// media parts are not text the model reads here.
func recordedContent(r *events.ToolResultRecorded) string {
	if len(r.Parts) == 1 && r.Parts[0].Type == "text" {
		return r.Parts[0].Text
	}
	var text []string
	for _, p := range r.Parts {
		if p.Type == "text" {
			text = append(text, p.Text)
		}
	}
	return strings.Join(text, "\n")
}

// tools are the catalogue's tools as the model is given them.
func tools(cat client.Catalog) []model.Tool {
	out := make([]model.Tool, len(cat.Tools))
	for i, t := range cat.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		out[i] = model.Tool{Name: t.Name, Description: t.Description, Schema: schema}
	}
	return out
}
