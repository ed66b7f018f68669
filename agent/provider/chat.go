package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/stepgate/stepgate/agent/model"
)

// chat is OpenAI Chat Completions (POST {base}/chat/completions), also what
// OpenAI-compatible servers (vLLM, llama.cpp, Ollama) speak.
type chat struct {
	client openai.Client
	opts   Options
}

func openaiOptions(opts Options) []option.RequestOption {
	o := []option.RequestOption{
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(opts.MaxRetries),
	}
	if opts.BaseURL != "" {
		o = append(o, option.WithBaseURL(opts.BaseURL))
	}
	if opts.HTTPClient != nil {
		o = append(o, option.WithHTTPClient(opts.HTTPClient))
	}
	if opts.RequestTimeout > 0 {
		o = append(o, option.WithRequestTimeout(opts.RequestTimeout))
	}
	return o
}

func newChat(opts Options) *chat {
	return &chat{client: openai.NewClient(openaiOptions(opts)...), opts: opts}
}

// Name is "openai".
func (p *chat) Name() string { return OpenAI }

// Next sends the conversation as Chat Completions messages.
func (p *chat) Next(ctx context.Context, req model.Request) (model.Turn, error) {
	params, err := chatParams(req)
	if err != nil {
		return model.Turn{}, err
	}
	if !req.Stream {
		res, err := p.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return model.Turn{}, failure(ctx, err, p.opts.APIKey, p.opts.Now)
		}
		turn := chatTurn(res)
		if req.OnText != nil && turn.Text != "" {
			req.OnText(turn.Text)
		}
		return turn, nil
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	acc := chatStream{calls: map[int64]*model.ToolCall{}}
	for stream.Next() {
		acc.add(stream.Current(), req.OnText)
	}
	if err := stream.Err(); err != nil {
		return model.Turn{}, failure(ctx, err, p.opts.APIKey, p.opts.Now)
	}
	return acc.turn(), nil
}

// chatParams is the request: system, the task, then per exchange the
// assistant message (text and tool_calls) and one "tool" message per call.
func chatParams(req model.Request) (openai.ChatCompletionNewParams, error) {
	c := req.Conversation
	var msgs []openai.ChatCompletionMessageParamUnion
	if c.System != "" {
		msgs = append(msgs, openai.SystemMessage(c.System))
	}
	msgs = append(msgs, openai.UserMessage(c.Task))
	for _, ex := range c.Exchanges {
		a := openai.ChatCompletionAssistantMessageParam{}
		if ex.Turn.Text != "" || len(ex.Turn.Calls) == 0 {
			a.Content.OfString = openai.String(ex.Turn.Text)
		}
		for _, call := range ex.Turn.Calls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: call.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: call.Name, Arguments: argsString(call),
					},
				},
			})
		}
		msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		for _, r := range ex.Results {
			msgs = append(msgs, openai.ToolMessage(r.Content, r.CallID))
		}
	}
	params := openai.ChatCompletionNewParams{Model: req.Model, Messages: msgs}
	if req.MaxTokens > 0 {
		params.MaxCompletionTokens = openai.Int(req.MaxTokens)
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return params, fmt.Errorf("openai request: %w", err)
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	return params, nil
}

// chatTurn reads the first choice of a completion.
func chatTurn(res *openai.ChatCompletion) model.Turn {
	turn := model.Turn{ID: res.ID, Usage: model.Usage{
		InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens,
	}}
	if len(res.Choices) == 0 {
		return turn
	}
	ch := res.Choices[0]
	turn.Text, turn.Stop = ch.Message.Content, ch.FinishReason
	for _, tc := range ch.Message.ToolCalls {
		turn.Calls = append(turn.Calls, model.ToolCall{
			ID: tc.ID, Name: tc.Function.Name, Args: []byte(tc.Function.Arguments),
		})
	}
	return turn
}

// chatStream gathers a streamed completion: text deltas in order, tool
// calls by their index (id and name on the first piece, arguments
// appended), the finish reason and the usage chunk.
type chatStream struct {
	id    string
	text  strings.Builder
	calls map[int64]*model.ToolCall
	stop  string
	usage model.Usage
}

func (s *chatStream) add(chunk openai.ChatCompletionChunk, onText func(string)) {
	if chunk.ID != "" {
		s.id = chunk.ID
	}
	if chunk.JSON.Usage.Valid() {
		s.usage = model.Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		if d := ch.Delta.Content; d != "" {
			s.text.WriteString(d)
			if onText != nil {
				onText(d)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			c := s.calls[tc.Index]
			if c == nil {
				c = &model.ToolCall{}
				s.calls[tc.Index] = c
			}
			if tc.ID != "" {
				c.ID = tc.ID
			}
			if tc.Function.Name != "" {
				c.Name = tc.Function.Name
			}
			c.Args = append(c.Args, tc.Function.Arguments...)
		}
		if ch.FinishReason != "" {
			s.stop = ch.FinishReason
		}
	}
}

func (s *chatStream) turn() model.Turn {
	turn := model.Turn{ID: s.id, Text: s.text.String(), Stop: s.stop, Usage: s.usage}
	idx := make([]int64, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	for _, i := range idx {
		turn.Calls = append(turn.Calls, *s.calls[i])
	}
	return turn
}
