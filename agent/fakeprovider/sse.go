package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// sse writes server-sent events as the APIs send them: "event:" lines
// when named (Responses, Anthropic), "data:" JSON, a blank line, flushed
// after each event.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event; name "" writes a data-only event (Chat).
func (s *sse) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.flush()
}

// raw writes "data: text" (Chat's final "[DONE]").
func (s *sse) raw(text string) {
	fmt.Fprintf(s.w, "data: %s\n\n", text)
	s.flush()
}

func (s *sse) flush() {
	if s.f != nil {
		s.f.Flush()
	}
}

// pieces splits s into chunks of about n bytes on rune boundaries, the
// way a stream delivers text and arguments in fragments.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
