// Package web is the operators' web app of `engine serve --http`: the
// inbox of pending tickets, the runs and their timelines, the saved
// approvals, and the JSON API under /api/ they talk to. Every read and
// every reply goes through the service's API ([client.API]) in the wire
// contract's types, as the CLI's do: there is no second way to answer a
// ticket. Live updates are read from the log (see [Follower]).
package web

import (
	"context"
	"embed"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/config"
)

//go:embed assets
var assets embed.FS

// Follower is the log the live stream reads: its last sequence, and every
// message from a sequence on (step.Log implements it).
type Follower interface {
	LastSeq(ctx context.Context) (uint64, error)
	Follow(ctx context.Context, from uint64, fn func(seq uint64, subject string, data []byte) error) error
}

// RunPage writes one run's timeline as a self-contained HTML page (the run
// report) to w.
type RunPage func(ctx context.Context, w io.Writer, api sgclient.API, run string) error

// Config configures a [Server].
type Config struct {
	// API answers every read and reply. Required.
	API sgclient.API
	// Log feeds the live stream. Required.
	Log Follower
	// Operators may sign in. At least one is required.
	Operators config.Operators
	// RunPage renders a run's timeline. Required.
	RunPage RunPage
	// Secure marks the session cookie Secure (the app is served over TLS).
	Secure bool
	// PublicURL is the app's external base URL ("" when it is the
	// listener's address); it is trusted as an origin of requests.
	PublicURL string
	// SessionTTL is how long a sign-in lasts; default 12 hours.
	SessionTTL time.Duration
	// Logger logs; default slog.Default().
	Logger *slog.Logger
}

// Server is the web app. Its zero value is not usable: see [New].
type Server struct {
	cfg      Config
	log      *slog.Logger
	sessions *sessions
	signIns  *signIns
	live     *hub
	static   fs.FS
	handler  http.Handler
}

// New builds the web app; [Server.Run] feeds its live stream.
func New(cfg Config) (*Server, error) {
	if cfg.API == nil || cfg.Log == nil || cfg.RunPage == nil {
		return nil, errors.New("web: an API, a log and a run page are required")
	}
	if len(cfg.Operators) == 0 {
		return nil, errNoOperators
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, sessions: newSessions(cfg.SessionTTL), signIns: newSignIns(), live: newHub(), static: static}
	h, err := s.routes()
	if err != nil {
		return nil, err
	}
	s.handler = h
	return s, nil
}

// errNoOperators refuses an app nobody could sign in to.
var errNoOperators = errors.New("web: no operator is declared: add one to the user's file (engine operator token NAME prints the line)")

// ServeHTTP serves the app.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Run follows the log for the live stream until ctx ends.
// When it returns, every open live stream has been ended.
func (s *Server) Run(ctx context.Context) error {
	defer s.live.closeAll()
	return s.live.follow(ctx, s.cfg.Log, s.log)
}
