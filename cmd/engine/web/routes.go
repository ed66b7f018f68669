package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// appCSP is the app's Content-Security-Policy: its own script, style and
// requests only; nothing inline, no frame but its own run pages.
const appCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

// routes is the app's handler: every route behind the cross-origin check,
// the pages and the API behind sign-in.
func (s *Server) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	files := http.FileServerFS(s.static)
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.Handle("POST /logout", s.signedIn(http.HandlerFunc(s.logout)))
	page := s.signedIn(http.HandlerFunc(s.index))
	for _, p := range []string{"GET /{$}", "GET /inbox", "GET /runs", "GET /runs/{id}", "GET /grants", "GET /tickets/{id}"} {
		mux.Handle(p, page)
	}
	mux.Handle("GET /report/{id}", s.signedIn(http.HandlerFunc(s.report)))

	mux.Handle("GET /api/session", s.signedIn(http.HandlerFunc(s.session)))
	mux.Handle("GET /api/tickets", s.signedIn(http.HandlerFunc(s.tickets)))
	mux.Handle("POST /api/tickets/{id}/reply", s.signedIn(http.HandlerFunc(s.reply)))
	mux.Handle("GET /api/runs", s.signedIn(http.HandlerFunc(s.runs)))
	mux.Handle("GET /api/runs/{id}", s.signedIn(http.HandlerFunc(s.run)))
	mux.Handle("GET /api/grants", s.signedIn(http.HandlerFunc(s.grants)))
	mux.Handle("POST /api/grants/{id}/revoke", s.signedIn(http.HandlerFunc(s.revoke)))
	mux.Handle("GET /api/events", s.signedIn(http.HandlerFunc(s.events)))

	cop := http.NewCrossOriginProtection()
	if s.cfg.PublicURL != "" {
		u, err := url.Parse(s.cfg.PublicURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("web: public URL %q: want scheme://host[:port]", s.cfg.PublicURL)
		}
		if err := cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, fmt.Errorf("web: public URL: %w", err)
		}
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.log.Warn("web: cross-origin request refused", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		writeError(w, http.StatusForbidden, "cross_origin", "cross-origin request refused")
	}))
	return headers(cop.Handler(mux)), nil
}

// headers sets the security headers of every answer.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if !strings.HasPrefix(r.URL.Path, "/report/") { // the report brings its own policy
			h.Set("Content-Security-Policy", appCSP)
			h.Set("X-Frame-Options", "DENY")
		} else {
			h.Set("Content-Security-Policy", "frame-ancestors 'self'; form-action 'none'; base-uri 'none'")
			h.Set("X-Frame-Options", "SAMEORIGIN")
		}
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// index is the single page of the inbox, runs and grants.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	http.ServeFileFS(w, r, s.static, "index.html")
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	http.ServeFileFS(w, r, s.static, "login.html")
}
