package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeFault answers f in the API's error shape.
//
// OpenAI (both APIs): {"error":{"message","type","param","code"}}, the
// shape internal/apierror of openai-go decodes from the body's "error".
// Anthropic: {"type":"error","error":{"type","message"},"request_id"},
// as in the Messages API's errors reference and the anthropic-sdk-go
// apierror tests.
func writeFault(w http.ResponseWriter, api string, f Fault) {
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMS != "" {
		w.Header().Set("retry-after-ms", f.RetryAfterMS)
	}
	w.Header().Set("Content-Type", "application/json")
	var body any
	if api == Messages {
		if f.Type == "" {
			f.Type = anthropicType(f.Status)
		}
		if f.Message == "" {
			f.Message = anthropicMessage(f.Status)
		}
		w.Header().Set("request-id", "req_fake")
		body = map[string]any{
			"type":       "error",
			"error":      map[string]string{"type": f.Type, "message": f.Message},
			"request_id": "req_fake",
		}
	} else {
		if f.Type == "" {
			f.Type = openaiType(f.Status)
		}
		if f.Message == "" {
			f.Message = openaiMessage(f.Status)
		}
		var code any
		if f.Code != "" {
			code = f.Code
		}
		body = map[string]any{"error": map[string]any{"message": f.Message, "type": f.Type, "param": nil, "code": code}}
	}
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(body)

}

func anthropicType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func anthropicMessage(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "Number of request tokens has exceeded your per-minute rate limit"
	case 529:
		return "Overloaded"
	case http.StatusInternalServerError:
		return "Internal server error"
	}
	return http.StatusText(status)
}

func openaiType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func openaiMessage(status int) string {
	if status >= 500 {
		return "The server had an error while processing your request. Sorry about that!"
	}
	return fmt.Sprintf("%d %s", status, http.StatusText(status))
}

// writeStreamFault starts a stream and fails it with f: Anthropic's
// "event: error" after message_start (the Messages streaming reference,
// e.g. overloaded_error), the Responses "error" event after
// response.created, a Chat data chunk {"error": …} after the role chunk.
func writeStreamFault(w http.ResponseWriter, api string, f Fault) {
	s := startSSE(w)
	switch api {
	case Messages:
		if f.Type == "" {
			f.Type = anthropicType(f.Status)
		}
		if f.Message == "" {
			f.Message = anthropicMessage(f.Status)
		}
		s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_fake_failed", "type": "message", "role": "assistant", "model": "fake-model", "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}})
		s.event("error", map[string]any{"type": "error", "error": map[string]string{"type": f.Type, "message": f.Message}})
	case Responses:
		if f.Message == "" {
			f.Message = openaiMessage(f.Status)
		}
		s.event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": map[string]any{
			"id": "resp_fake_failed", "object": "response", "status": "in_progress", "output": []any{}}})
		s.event("error", map[string]any{"type": "error", "sequence_number": 1, "code": "server_error", "message": f.Message, "param": nil})
	default:
		if f.Type == "" {
			f.Type = openaiType(f.Status)
		}
		if f.Message == "" {
			f.Message = openaiMessage(f.Status)
		}
		s.event("", map[string]any{"id": "chatcmpl-fake-failed", "object": "chat.completion.chunk", "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil}}})
		s.event("", map[string]any{"error": map[string]any{"message": f.Message, "type": f.Type, "param": nil, "code": nil}})
	}
}
