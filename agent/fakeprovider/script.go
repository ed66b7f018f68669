package fakeprovider

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/stepgate/stepgate/agent/model"
)

// Request is one model request as the server parsed it.
type Request struct {
	API          string // Chat, Responses or Messages
	Model        string
	Stream       bool
	Tools        []string // the names of the tools offered, in request order
	Conversation model.Conversation

	streamUsage bool // Chat: stream_options.include_usage
}

// Fault is an error answer, written in the API's own error shape.
type Fault struct {
	Status int
	// Type is the error type ("rate_limit_error", "server_error", …); empty
	// picks the API's usual type for Status.
	Type    string
	Code    string // OpenAI's error code, e.g. "rate_limit_exceeded"
	Message string
	// RetryAfter and RetryAfterMS, when set, are sent as the Retry-After
	// and retry-after-ms headers, verbatim.
	RetryAfter   string
	RetryAfterMS string
	// MidStream, for a streaming request, answers 200 and starts the
	// stream, then sends the error as an event, as the APIs do when they
	// fail after accepting a request (Anthropic's "event: error", the
	// Responses "error" event, Chat's data: {"error": …}).
	MidStream bool
}

// Script answers one request: the next turn, or a fault. Call ids left
// empty are filled in by the server. A Script may be called concurrently.
type Script func(req Request) (model.Turn, *Fault)

// Reply answers every request with turn.
func Reply(turn model.Turn) Script {
	return func(Request) (model.Turn, *Fault) { return turn, nil }
}

// ByTurn answers a conversation with i exchanges with turns[i] (the last
// turn once the list is exhausted).
func ByTurn(turns ...model.Turn) Script {
	return func(req Request) (model.Turn, *Fault) {
		if len(turns) == 0 {
			return model.Turn{Text: "ok"}, nil
		}
		i := min(len(req.Conversation.Exchanges), len(turns)-1)
		return turns[i], nil
	}
}

// Fail answers every request with f.
func Fail(f Fault) Script {
	return func(Request) (model.Turn, *Fault) { return model.Turn{}, &f }
}

// WriteThenBash is the task of the acceptance test in two turns: the first
// calls write to create path with content, the second (once write's result
// is back) calls bash to run command, the third answers with text naming
// both results.
func WriteThenBash(path, content, command string) Script {
	return func(req Request) (model.Turn, *Fault) {
		switch n := len(req.Conversation.Exchanges); n {
		case 0:
			return model.Turn{Text: "I will write the file.", Calls: []model.ToolCall{writeCall(path, content)}}, nil
		case 1:
			return model.Turn{Text: "Now I run the command.", Calls: []model.ToolCall{bashCall(command)}}, nil
		default:
			return model.Turn{Text: finalText(req.Conversation)}, nil
		}
	}
}

// WriteAndBash is WriteThenBash with both calls parallel in one turn
// (write first, then bash), then the text.
func WriteAndBash(path, content, command string) Script {
	return func(req Request) (model.Turn, *Fault) {
		if len(req.Conversation.Exchanges) == 0 {
			return model.Turn{Text: "Writing and running.", Calls: []model.ToolCall{writeCall(path, content), bashCall(command)}}, nil
		}
		return model.Turn{Text: finalText(req.Conversation)}, nil
	}
}

// Turns is the bench's script: n turns of k calls each, call i of turn t
// made by call(t, i); after n turns, the text "done".
func Turns(n, k int, call func(turn, i int) model.ToolCall) Script {
	return func(req Request) (model.Turn, *Fault) {
		t := len(req.Conversation.Exchanges)
		if t >= n {
			return model.Turn{Text: "done"}, nil
		}
		turn := model.Turn{Text: fmt.Sprintf("turn %d", t+1)}
		for i := range k {
			turn.Calls = append(turn.Calls, call(t, i))
		}
		return turn, nil
	}
}

func writeCall(path, content string) model.ToolCall {
	return model.ToolCall{Name: "write", Args: mustJSON(map[string]string{"path": path, "content": content})}
}

func bashCall(command string) model.ToolCall {
	return model.ToolCall{Name: "bash", Args: mustJSON(map[string]string{"command": command})}
}

// finalText names every result the model was given, so a test reads from
// the answer that both results came back.
func finalText(c model.Conversation) string {
	var b strings.Builder
	b.WriteString("Done.")
	for _, ex := range c.Exchanges {
		for _, r := range ex.Results {
			state := "ok"
			if r.IsError {
				state = "error"
			}
			fmt.Fprintf(&b, " %s (%s): %s.", r.Name, state, strings.TrimSpace(r.Content))
		}
	}
	return b.String()
}

// RateLimited is a 429 with Retry-After seconds, in the API's shape.
func RateLimited(seconds string) Fault {
	return Fault{Status: http.StatusTooManyRequests, RetryAfter: seconds, Message: "Rate limit reached; please try again later."}
}
