package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/cmd/engine/httpguard"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// trickle opens a connection to addr from the loopback address from and
// sends a sign-in's headers and one byte of its body of 1000; the channel
// is closed when the server closes the connection.
func trickle(t *testing.T, from, addr string) <-chan struct{} {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, "POST /login HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nt"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, c)
	}()
	return done
}

// awaitClosed waits until n of the connections have been closed by the
// server, for at most guard.
func awaitClosed(t *testing.T, ends []<-chan struct{}, n int, guard time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		gone := 0
		for _, e := range ends {
			select {
			case <-e:
				gone++
			default:
			}
		}
		if gone >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d connections closed by the server after %s", what, gone, n, guard)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The inbox against slow clients: sign-in bodies trickled from one
// address beyond its connection cap are closed at once, an operator on
// another address still signs in, the trickles within the cap are closed
// by the server once their time to send a request is up, and the live
// stream opened before them is not cut meanwhile.
func TestServeHTTPSlowClients(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	writeUserFile(t, home, config.OperatorLine("ops-1", "sgop_slow-token"))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "", "--lease", "0", "--http", "127.0.0.1:0"}, &out, &errs)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	re := regexp.MustCompile(`operators' inbox on http://([0-9.:]+)/`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve did not say where: %s %s", out.String(), errs.String())
		}
	}

	req, err := http.NewRequest("GET", "http://"+addr+"/api/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sgop_slow-token")
	live, err := http.DefaultClient.Do(req)
	if err != nil || live.StatusCode != http.StatusOK {
		t.Fatalf("the live stream: %v %v", err, live)
	}
	defer live.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(live.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	const extra = 8
	var ends []<-chan struct{}
	for range httpguard.MaxConnsPerAddr + extra {
		ends = append(ends, trickle(t, "127.0.0.2", addr))
	}
	awaitClosed(t, ends, extra, time.Minute, "beyond the per-address cap")

	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm("http://"+addr+"/login", url.Values{"token": {"sgop_slow-token"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Set-Cookie"), "sg_session=") {
		t.Errorf("an operator's sign-in while the trickles are held: %d %q", res.StatusCode, res.Header.Get("Set-Cookie"))
	}

	awaitClosed(t, ends, len(ends), 3*time.Minute, "trickled bodies")
	for drained := false; !drained; { // what the stream sent so far
		select {
		case _, open := <-lines:
			if !open {
				t.Fatal("the live stream ended while the trickles were cut")
			}
		default:
			drained = true
		}
	}
	select { // and it goes on: its next heartbeat
	case _, open := <-lines:
		if !open {
			t.Fatal("the live stream ended after the trickles were cut")
		}
	case <-time.After(time.Minute):
		t.Fatal("the live stream sent nothing for a minute after the trickles were cut")
	}
}
