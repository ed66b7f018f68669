// Package fakeprovider is an in-process model provider server speaking the
// real wire shapes of OpenAI Chat Completions, the OpenAI Responses API and
// Anthropic Messages, streaming and not, for tests, the demo and the bench.
//
// A Script decides each turn from the request as parsed into a
// model.Conversation. The server checks the API key, refuses what the real
// APIs refuse (an Anthropic tool_use without its tool_result in the next
// user message, a Chat tool_call without its tool message, a Responses
// function_call without its output), counts requests per distinct
// conversation and keeps every request body for assertions.
package fakeprovider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/stepgate/stepgate/agent/model"
)

// The APIs the server speaks, as Request.API names them.
const (
	Chat      = "openai"
	Responses = "openai-responses"
	Messages  = "anthropic"
)

// maxBody bounds a request body the server reads.
const maxBody = 16 << 20

// Config configures a Server.
type Config struct {
	// APIKey is the key every request must carry ("Authorization: Bearer"
	// for OpenAI; that or "x-api-key" for Anthropic); empty accepts any
	// key.
	APIKey string
	// Script answers each request; nil answers every request with the
	// text "ok".
	Script Script
	// Replay, when set and answering true, answers a request with a
	// recorded body instead of the script's turn.
	Replay func(Request) (Recording, bool)
	// Model is the model name the responses report when the request names
	// none.
	Model string
}

// Recorded is one request the server received.
type Recorded struct {
	API    string // Chat, Responses or Messages
	Path   string
	Stream bool
	Body   []byte // the request body, verbatim
	// Conversation is the body parsed; Key identifies it (a digest of its
	// canonical JSON): the same conversation sent again has the same key.
	Conversation model.Conversation
	Key          string
	Status       int // the status the server answered
}

// Server is the fake provider; it is an http.Handler, safe for concurrent
// use.
type Server struct {
	cfg  Config
	mu   sync.Mutex
	reqs []Recorded
	keys map[string]int
	turn map[string]int // requests answered per API, for ids
}

// New returns a server with cfg.
func New(cfg Config) *Server {
	if cfg.Script == nil {
		cfg.Script = Reply(model.Turn{Text: "ok"})
	}
	if cfg.Model == "" {
		cfg.Model = "fake-model"
	}
	return &Server{cfg: cfg, keys: map[string]int{}, turn: map[string]int{}}
}

// Start serves s on a loopback port until ctx ends or stop is called. The
// URL is the server's root: an OpenAI client's base URL is url+"/v1", an
// Anthropic client's is url (the server also answers the bare paths).
func (s *Server) Start(ctx context.Context) (url string, stop func(), err error) {
	return s.Listen(ctx, "127.0.0.1:0")
}

// Listen is Start on addr (host:port; port 0 picks a free one).
func (s *Server) Listen(ctx context.Context, addr string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: s}
	go func() { _ = hs.Serve(ln) }()
	ctx, cancel := context.WithCancel(ctx)
	go func() { <-ctx.Done(); _ = hs.Close() }()
	var once sync.Once
	return "http://" + ln.Addr().String(), func() { once.Do(func() { cancel(); _ = hs.Close() }) }, nil
}

// ServeHTTP answers POST …/chat/completions, …/responses and …/messages
// (with or without the /v1 prefix).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var api string
	switch p := strings.TrimSuffix(r.URL.Path, "/"); {
	case strings.HasSuffix(p, "/chat/completions"):
		api = Chat
	case strings.HasSuffix(p, "/responses"):
		api = Responses
	case strings.HasSuffix(p, "/messages"):
		api = Messages
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		writeFault(w, api, Fault{Status: http.StatusMethodNotAllowed, Message: "method not allowed"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeFault(w, api, Fault{Status: http.StatusBadRequest, Message: "could not read the request body"})
		return
	}
	rec := Recorded{API: api, Path: r.URL.Path, Body: body}
	answer := s.answer(r, &rec)
	// Recorded before the answer is written, so a client that has read its
	// answer finds its request counted.
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	if rec.Key != "" && rec.Status == http.StatusOK {
		s.keys[rec.Key]++
	}
	s.mu.Unlock()
	answer(w)
}

// answer decides the answer to a request, fills in rec and returns the
// function that writes the answer.
func (s *Server) answer(r *http.Request, rec *Recorded) func(http.ResponseWriter) {
	fault := func(f Fault) func(http.ResponseWriter) {
		rec.Status = f.Status
		if rec.Status == 0 {
			rec.Status = http.StatusInternalServerError
		}
		return func(w http.ResponseWriter) { writeFault(w, rec.API, f) }
	}
	if f, ok := s.authFault(r, rec.API); !ok {
		return fault(f)
	}
	var (
		req Request
		f   *Fault
	)
	switch rec.API {
	case Chat:
		req, f = ParseChat(rec.Body)
	case Responses:
		req, f = ParseResponses(rec.Body)
	default:
		req, f = ParseMessages(rec.Body)
	}
	if f != nil {
		return fault(*f)
	}
	rec.Stream, rec.Conversation, rec.Key = req.Stream, req.Conversation, ConversationKey(req.Conversation)
	if s.cfg.Replay != nil {
		if recording, ok := s.cfg.Replay(req); ok {
			rec.Status = http.StatusOK
			return func(w http.ResponseWriter) { writeRecording(w, recording) }
		}
	}
	turn, sf := s.cfg.Script(req)
	if sf != nil && sf.MidStream && req.Stream {
		rec.Status = http.StatusOK
		f := *sf
		return func(w http.ResponseWriter) { writeStreamFault(w, rec.API, f) }
	}
	if sf != nil {
		return fault(*sf)
	}
	if req.Model == "" {
		req.Model = s.cfg.Model
	}
	s.mu.Lock()
	s.turn[rec.API]++
	n := s.turn[rec.API]
	s.mu.Unlock()
	turn = withIDs(turn, rec.API, n)
	rec.Status = http.StatusOK
	return func(w http.ResponseWriter) {
		switch rec.API {
		case Chat:
			writeChat(w, req, turn)
		case Responses:
			writeResponses(w, req, turn)
		default:
			writeMessages(w, req, turn)
		}
	}
}

// authFault checks the key header of the API.
func (s *Server) authFault(r *http.Request, api string) (Fault, bool) {
	if s.cfg.APIKey == "" {
		return Fault{}, true
	}
	bearer := r.Header.Get("Authorization") == "Bearer "+s.cfg.APIKey
	if api == Messages {
		// anthropic-sdk-go v2 sends the key as "Authorization: Bearer";
		// other clients send x-api-key. Either is accepted.
		if bearer || r.Header.Get("x-api-key") == s.cfg.APIKey {
			return Fault{}, true
		}
		// Anthropic's answer to a wrong key.
		return Fault{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key"}, false
	}
	if bearer {
		return Fault{}, true
	}
	// OpenAI's answer to a wrong key names it masked; the fake names none.
	return Fault{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."}, false
}

// Requests returns every request received, in arrival order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// Count returns the number of requests received and, per distinct
// conversation (Recorded.Key), how many of them were answered with a turn:
// a loop that never sends a recorded turn again has every value 1.
func (s *Server) Count() (total int, perConversation map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	per := make(map[string]int, len(s.keys))
	for k, v := range s.keys {
		per[k] = v
	}
	return len(s.reqs), per
}

// ConversationKey is a digest of c's canonical JSON.
func ConversationKey(c model.Conversation) string {
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
