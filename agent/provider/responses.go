package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/stepgate/stepgate/agent/model"
)

// respAPI is the OpenAI Responses API (POST {base}/responses) used
// statelessly: store=false, no previous_response_id, the whole input sent
// every time, so the log alone rebuilds every request.
type respAPI struct {
	client openai.Client
	opts   Options
}

func newResponses(opts Options) *respAPI {
	return &respAPI{client: openai.NewClient(openaiOptions(opts)...), opts: opts}
}

// Name is "openai-responses".
func (p *respAPI) Name() string { return OpenAIResponses }

// Next sends the conversation as Responses input items.
func (p *respAPI) Next(ctx context.Context, req model.Request) (model.Turn, error) {
	params, err := responsesParams(req)
	if err != nil {
		return model.Turn{}, err
	}
	if !req.Stream {
		res, err := p.client.Responses.New(ctx, params)
		if err != nil {
			return model.Turn{}, failure(ctx, err, p.opts.APIKey, p.opts.Now)
		}
		turn := responsesTurn(res)
		if req.OnText != nil && turn.Text != "" {
			req.OnText(turn.Text)
		}
		return turn, nil
	}
	stream := p.client.Responses.NewStreaming(ctx, params)
	defer stream.Close()
	var done *responses.Response
	var streamErr string
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			if req.OnText != nil && ev.Delta != "" {
				req.OnText(ev.Delta)
			}
		case "response.completed", "response.incomplete", "response.failed":
			r := ev.Response
			done = &r
		case "error":
			streamErr = ev.Message
		}
	}
	if err := stream.Err(); err != nil {
		return model.Turn{}, failure(ctx, err, p.opts.APIKey, p.opts.Now)
	}
	if done == nil {
		if streamErr == "" {
			streamErr = "the response stream ended before response.completed"
		}
		return model.Turn{}, &model.Error{Retryable: true, Message: scrub(streamErr, p.opts.APIKey)}
	}
	if done.Status == "failed" {
		return model.Turn{}, &model.Error{Retryable: true, Message: scrub(done.Error.Message, p.opts.APIKey)}
	}
	return responsesTurn(done), nil
}

// responsesParams: instructions (the system text), the task as a user
// message, then per exchange the assistant's text as an assistant message,
// one function_call item per call and one function_call_output per result.
func responsesParams(req model.Request) (responses.ResponseNewParams, error) {
	c := req.Conversation
	items := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage(c.Task, responses.EasyInputMessageRoleUser),
	}
	for _, ex := range c.Exchanges {
		if ex.Turn.Text != "" {
			items = append(items, responses.ResponseInputItemParamOfMessage(ex.Turn.Text, responses.EasyInputMessageRoleAssistant))
		}
		for _, call := range ex.Turn.Calls {
			items = append(items, responses.ResponseInputItemParamOfFunctionCall(argsString(call), call.ID, call.Name))
		}
		for _, r := range ex.Results {
			out := responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(r.CallID)}
			out.Output.OfString = openai.String(r.Content)
			items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &out})
		}
	}
	params := responses.ResponseNewParams{
		Model: req.Model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items},
		Store: openai.Bool(false),
	}
	if c.System != "" {
		params.Instructions = openai.String(c.System)
	}
	if req.MaxTokens > 0 {
		params.MaxOutputTokens = openai.Int(req.MaxTokens)
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return params, fmt.Errorf("openai responses request: %w", err)
		}
		fn := &responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: openai.Bool(false)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: fn})
	}
	return params, nil
}

// responsesTurn reads the output items: output_text of message items,
// function_call items in output order.
func responsesTurn(res *responses.Response) model.Turn {
	turn := model.Turn{ID: res.ID, Stop: string(res.Status), Usage: model.Usage{
		InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens,
	}}
	var text strings.Builder
	for _, item := range res.Output {
		switch item.Type {
		case "message":
			for _, part := range item.Content {
				if part.Type == "output_text" {
					text.WriteString(part.Text)
				}
			}
		case "function_call":
			fc := item.AsFunctionCall()
			turn.Calls = append(turn.Calls, model.ToolCall{ID: fc.CallID, Name: fc.Name, Args: []byte(fc.Arguments)})
		}
	}
	turn.Text = text.String()
	return turn
}
