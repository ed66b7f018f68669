package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Sign-in beyond the rate answers 429 with Retry-After, even with the
// right token; a bearer token is not a sign-in and is still served.
func TestSignInIsRateLimited(t *testing.T) {
	a := startApp(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"}
	for i := range signInBurst {
		if code, _ := a.do(t, noRedirect, "POST", "/login", url.Values{"token": {fmt.Sprintf("sgop_wrong-%d", i)}}.Encode(), form); code != http.StatusSeeOther {
			t.Fatalf("sign-in %d within the burst: %d, want 303 (refused, back to the form)", i, code)
		}
	}
	res, err := noRedirect.PostForm(a.srv.URL+"/login", url.Values{"token": {tokenOne}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if retry, _ := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != http.StatusTooManyRequests || retry < 1 {
		t.Errorf("the right token past the burst: %d Retry-After %q, want 429 with a Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if code, body := a.do(t, nil, "GET", "/api/tickets", "", map[string]string{"Authorization": "Bearer " + tokenOne}); code != http.StatusOK {
		t.Errorf("the right bearer token: %d %s, want 200", code, body)
	}
}

// A bucket refills at the rate, addresses are counted apart, and the
// buckets remembered stay bounded however many addresses try.
func TestSignInsBuckets(t *testing.T) {
	s := newSignIns()
	now := time.Unix(1000, 0)
	for i := range signInBurst {
		if ok, _ := s.allow("192.0.2.1", now); !ok {
			t.Fatalf("attempt %d of the burst refused", i)
		}
	}
	ok, wait := s.allow("192.0.2.1", now)
	if ok || wait <= 0 || wait > signInEvery {
		t.Fatalf("past the burst: ok=%v wait=%s, want refused with a wait of at most %s", ok, wait, signInEvery)
	}
	if ok, _ := s.allow("192.0.2.2", now); !ok {
		t.Error("another address refused")
	}
	if ok, _ := s.allow("192.0.2.1", now.Add(wait)); !ok {
		t.Errorf("refused again after the wait it was told (%s)", wait)
	}
	if ok, _ := s.allow("192.0.2.1", now.Add(wait)); ok {
		t.Error("two attempts allowed for one refill")
	}
	for i := range maxSignInAddrs + 100 {
		s.allow(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), now)
		if len(s.m) > maxSignInAddrs {
			t.Fatalf("%d buckets remembered, bound %d", len(s.m), maxSignInAddrs)
		}
	}
}
