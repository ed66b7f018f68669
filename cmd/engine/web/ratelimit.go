package web

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Sign-in attempts (POST /login, right or wrong) are rate-limited per
// client address: a burst of signInBurst, then one every signInEvery.
// Tokens have 256 random bits, so this is not what keeps them secret; it
// keeps a client from spending the host's time, its sessions and the log
// on sign-ins. A bearer token is checked on each request and is not
// limited (an unknown one is 401). Behind a proxy every attempt is the
// proxy's.
const (
	signInBurst = 10
	signInEvery = 6 * time.Second
	// maxSignInAddrs bounds the addresses remembered; one whose bucket is
	// full again is forgotten first.
	maxSignInAddrs = 4096
)

// signIns are the sign-in buckets, one per client address.
type signIns struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

func newSignIns() *signIns { return &signIns{m: map[string]*rate.Limiter{}} }

// allow takes one attempt from addr's bucket; when it is empty, wait is
// how long until the next attempt is allowed.
func (s *signIns) allow(addr string, now time.Time) (ok bool, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.m[addr]
	if l == nil {
		if len(s.m) >= maxSignInAddrs {
			s.forget(now)
		}
		l = rate.NewLimiter(rate.Every(signInEvery), signInBurst)
		s.m[addr] = l
	}
	r := l.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// forget drops the buckets that are full again (their address has not
// tried for a while) or, when none is, one of them: the map stays bounded.
func (s *signIns) forget(now time.Time) {
	for addr, l := range s.m {
		if l.TokensAt(now) >= signInBurst {
			delete(s.m, addr)
		}
	}
	for addr := range s.m {
		if len(s.m) < maxSignInAddrs {
			return
		}
		delete(s.m, addr)
	}
}

// clientAddr is the request's client address: the connection's remote IP
// (never a header, which the client writes).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// tooManySignIns answers 429 with Retry-After when addr's bucket is
// empty, and reports whether it did.
func (s *Server) tooManySignIns(w http.ResponseWriter, r *http.Request) bool {
	ok, wait := s.signIns.allow(clientAddr(r), time.Now())
	if ok {
		return false
	}
	s.log.Warn("web: sign-in refused: too many attempts", "remote", r.RemoteAddr)
	w.Header().Set("Retry-After", strconv.Itoa(int(wait.Round(time.Second)/time.Second)+1))
	writeError(w, http.StatusTooManyRequests, "rate_limited", "too many sign-in attempts from this address: wait and try again")
	return true
}
