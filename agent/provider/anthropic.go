package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/stepgate/stepgate/agent/model"
)

// defaultMaxTokens is sent when the request leaves MaxTokens 0: Anthropic
// requires max_tokens.
const defaultMaxTokens = 4096

// messages is Anthropic Messages (POST {base}/v1/messages).
type messages struct {
	client anthropic.Client
	opts   Options
}

func newAnthropic(opts Options) *messages {
	// No environment defaults: the key, the base URL and the profile come
	// from opts alone, and the SDK's own tracing is off (the loop records
	// its own spans, without the conversation's content).
	o := []aoption.RequestOption{
		aoption.WithoutEnvironmentDefaults(),
		aoption.WithoutOpenTelemetry(),
		aoption.WithAPIKey(opts.APIKey),
		aoption.WithMaxRetries(opts.MaxRetries),
	}
	if opts.BaseURL != "" {
		o = append(o, aoption.WithBaseURL(opts.BaseURL))
	}
	if opts.HTTPClient != nil {
		o = append(o, aoption.WithHTTPClient(opts.HTTPClient))
	}
	if opts.RequestTimeout > 0 {
		o = append(o, aoption.WithRequestTimeout(opts.RequestTimeout))
	}
	return &messages{client: anthropic.NewClient(o...), opts: opts}
}

// Name is "anthropic".
func (p *messages) Name() string { return Anthropic }

// Next sends the conversation as Messages.
func (p *messages) Next(ctx context.Context, req model.Request) (model.Turn, error) {
	params, err := anthropicParams(req)
	if err != nil {
		return model.Turn{}, err
	}
	if !req.Stream {
		res, err := p.client.Messages.New(ctx, params)
		if err != nil {
			return model.Turn{}, failure(ctx, err, p.opts.APIKey, p.opts.Now)
		}
		turn := anthropicTurn(res)
		if req.OnText != nil && turn.Text != "" {
			req.OnText(turn.Text)
		}
		return turn, nil
	}
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return model.Turn{}, &model.Error{Retryable: true, Message: "anthropic stream: " + scrub(err.Error(), p.opts.APIKey)}
		}
		if ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && req.OnText != nil && ev.Delta.Text != "" {
			req.OnText(ev.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		return model.Turn{}, failure(ctx, err, p.opts.APIKey, p.opts.Now)
	}
	return anthropicTurn(&msg), nil
}

// anthropicParams: system, the task as the first user message, then per
// exchange an assistant message (text block, then one tool_use block per
// call) and ONE user message carrying every tool_result of the turn, in
// call order, with is_error on a blocked or failed call's result.
func anthropicParams(req model.Request) (anthropic.MessageNewParams, error) {
	c := req.Conversation
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(c.Task))}
	for _, ex := range c.Exchanges {
		var blocks []anthropic.ContentBlockParamUnion
		if ex.Turn.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(ex.Turn.Text))
		}
		for _, call := range ex.Turn.Calls {
			blocks = append(blocks, anthropic.NewToolUseBlock(call.ID, argsObject(call), call.Name))
		}
		if len(blocks) == 0 {
			// The API refuses an empty assistant message; a turn without
			// text or calls is carried as an empty text.
			blocks = append(blocks, anthropic.NewTextBlock(""))
		}
		msgs = append(msgs, anthropic.NewAssistantMessage(blocks...))
		if len(ex.Results) == 0 {
			continue
		}
		results := make([]anthropic.ContentBlockParamUnion, 0, len(ex.Results))
		for _, r := range ex.Results {
			results = append(results, toolResult(r))
		}
		msgs = append(msgs, anthropic.NewUserMessage(results...))
	}
	max := req.MaxTokens
	if max <= 0 {
		max = defaultMaxTokens
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: max, Messages: msgs}
	if c.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: c.System}}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return params, fmt.Errorf("anthropic request: %w", err)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: inputSchema(schema)}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return params, nil
}

// toolResult is one tool_result block; is_error is sent only when set.
func toolResult(r model.Result) anthropic.ContentBlockParamUnion {
	b := anthropic.ToolResultBlockParam{
		ToolUseID: r.CallID,
		Content:   []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: r.Content}}},
	}
	if r.IsError {
		b.IsError = anthropic.Bool(true)
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &b}
}

// inputSchema carries a JSON Schema object as input_schema: properties and
// required in their fields, every other keyword as an extra field.
func inputSchema(m map[string]any) anthropic.ToolInputSchemaParam {
	s := anthropic.ToolInputSchemaParam{Properties: m["properties"]}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required":
			continue
		}
		if s.ExtraFields == nil {
			s.ExtraFields = map[string]any{}
		}
		s.ExtraFields[k] = v
	}
	return s
}

// anthropicTurn reads text and tool_use blocks in content order.
func anthropicTurn(m *anthropic.Message) model.Turn {
	turn := model.Turn{ID: m.ID, Stop: string(m.StopReason), Usage: model.Usage{
		InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
	}}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			turn.Calls = append(turn.Calls, model.ToolCall{ID: b.ID, Name: b.Name, Args: append([]byte(nil), b.Input...)})
		}
	}
	turn.Text = text.String()
	return turn
}
