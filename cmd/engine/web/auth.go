package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
)

// Sign-in: a session cookie (made by POST /login with an operator's token)
// or an Authorization: Bearer token on every request (scripts).
const (
	sessionCookie = "sg_session"
	csrfHeader    = "X-CSRF-Token"
	maxSessions   = 1024
)

// session is one sign-in: the operator and the CSRF token its
// state-changing requests carry.
type session struct {
	operator string
	csrf     string
	expires  time.Time
}

// sessions are the app's sign-ins, in memory: a restarted app signs
// everyone out.
type sessions struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]session
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, m: map[string]session{}}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open makes a session for operator and returns its id.
func (ss *sessions) open(operator string, now time.Time) (string, session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for id, s := range ss.m {
		if now.After(s.expires) {
			delete(ss.m, id)
		}
	}
	for len(ss.m) >= maxSessions { // bounded: the oldest-expiring goes
		var old string
		for id, s := range ss.m {
			if old == "" || s.expires.Before(ss.m[old].expires) {
				old = id
			}
		}
		delete(ss.m, old)
	}
	id := randomToken()
	s := session{operator: operator, csrf: randomToken(), expires: now.Add(ss.ttl)}
	ss.m[id] = s
	return id, s
}

func (ss *sessions) get(id string, now time.Time) (session, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[id]
	if !ok || now.After(s.expires) {
		delete(ss.m, id)
		return session{}, false
	}
	return s, true
}

func (ss *sessions) close(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, id)
}

// who is the signed-in operator of a request.
type who struct {
	operator string
	csrf     string // "" for a bearer token
	session  string
}

type whoKey struct{}

func operatorOf(ctx context.Context) who {
	w, _ := ctx.Value(whoKey{}).(who)
	return w
}

// principal is what a reply made by w records.
func (w who) principal() string { return "operator:" + w.operator }

// signedIn lets through a request of a signed-in operator: a valid session
// cookie (and, for a state-changing request, its CSRF token in the
// X-CSRF-Token header), or a bearer token of an operator. Any other API
// request is 401 and changes nothing; a page is sent to the sign-in form.
func (s *Server) signedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		var id who
		if auth := r.Header.Get("Authorization"); auth != "" {
			token, ok := strings.CutPrefix(auth, "Bearer ")
			op, found := s.cfg.Operators.Match(strings.TrimSpace(token))
			if !ok || !found {
				writeError(w, http.StatusUnauthorized, "unauthorized", "unknown bearer token")
				return
			}
			id = who{operator: op.Name}
		} else if c, err := r.Cookie(sessionCookie); err == nil {
			sess, ok := s.sessions.get(c.Value, now)
			if ok {
				id = who{operator: sess.operator, csrf: sess.csrf, session: c.Value}
			}
		}
		if id.operator == "" {
			if strings.HasPrefix(r.URL.Path, "/api/") || r.Method != http.MethodGet {
				writeError(w, http.StatusUnauthorized, "unauthorized", "sign in: an operator's token as a bearer token, or a session from /login")
				return
			}
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		if id.csrf != "" && !safeMethod(r.Method) {
			got := r.Header.Get(csrfHeader)
			if subtle.ConstantTimeCompare([]byte(got), []byte(id.csrf)) != 1 {
				writeError(w, http.StatusForbidden, "csrf", "missing or wrong "+csrfHeader+" header")
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), whoKey{}, id)))
	})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// login checks the form's token and opens a session.
// Attempts are rate-limited per client address (see signInBurst).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if s.tooManySignIns(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, sgclient.CodeInvalidInput, "a form with a token")
		return
	}
	op, ok := s.cfg.Operators.Match(r.PostForm.Get("token"))
	if !ok {
		s.log.Warn("web: sign-in refused: unknown token", "remote", r.RemoteAddr)
		http.Redirect(w, r, "/login?failed=1", http.StatusSeeOther)
		return
	}
	id, sess := s.sessions.open(op.Name, time.Now())
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, Secure: s.cfg.Secure,
		SameSite: http.SameSiteStrictMode, Expires: sess.expires})
	s.log.Info("web: operator signed in", "operator", op.Name, "remote", r.RemoteAddr)
	http.Redirect(w, r, "/inbox", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if id := operatorOf(r.Context()); id.session != "" {
		s.sessions.close(id.session)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, Secure: s.cfg.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

// session tells the page who is signed in and its CSRF token.
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	id := operatorOf(r.Context())
	writeJSON(w, http.StatusOK, sgclient.Session{Operator: id.operator, Principal: id.principal(), CSRF: id.csrf})
}
