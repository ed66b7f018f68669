package integration

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/cmd/engine/httpguard"
)

// trickleMCP opens a connection to addr from the loopback address from
// and sends a tools/call's headers and one byte of its body of 1000; the
// channel is closed when the server closes the connection.
func trickleMCP(t *testing.T, from, addr string) <-chan struct{} {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, c)
	}()
	return done
}

// closedCount is how many of the channels are closed.
func closedCount(ends []<-chan struct{}) (n int) {
	for _, e := range ends {
		select {
		case <-e:
			n++
		default:
		}
	}
	return n
}

// `engine mcp serve --listen` against slow clients: bodies trickled from
// one address beyond its connection cap are closed at once while the
// go-sdk's clients are served, the trickles within the cap are closed once
// their time to send a request is up, and a tools/call that waited for its
// ticket all that time (a stream) still gets its result.
func TestMCPServeHTTPSlowClients(t *testing.T) {
	s := newGWSetup(t)
	addr := s.httpGW(t, "--session", "slow", "--wait", "5m")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	connect := func(name string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/"}, nil)
		if err != nil {
			t.Fatalf("connect %s: %v", name, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	waiting := connect("stepgate-go-waiting")
	var res *mcp.CallToolResult
	var callErr error
	called := make(chan struct{})
	go func() {
		defer close(called)
		res, callErr = waiting.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo waited-long"}})
	}()
	tk := s.awaitTicket(t, "bash")

	const extra = 8
	var ends []<-chan struct{}
	for range httpguard.MaxConnsPerAddr + extra {
		ends = append(ends, trickleMCP(t, "127.0.0.2", addr))
	}
	for deadline := time.Now().Add(time.Minute); closedCount(ends) < extra; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the %d connections beyond the per-address cap closed after a minute", closedCount(ends), extra)
		}
	}
	if names := gwToolNames(t, connect("stepgate-go-meanwhile")); len(names) == 0 {
		t.Error("a client meanwhile lists no tools")
	}
	for deadline := time.Now().Add(3 * time.Minute); closedCount(ends) < len(ends); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d trickled bodies closed by the server after 3 minutes", closedCount(ends), len(ends))
		}
	}
	engine(t, "approve", tk.ID, "--nats", s.url)
	<-called
	if callErr != nil || res.IsError || !strings.Contains(gwText(res), "waited-long") {
		t.Errorf("the call that waited while the trickles were cut: %v %+v", callErr, res)
	}
}
