package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/stepgate/stepgate/executor/sandbox/proxy"
)

// hosts is a resolver for the example's names.
type hosts map[string]string

// LookupNetIP answers from the map.
func (h hosts) LookupNetIP(_ context.Context, _, name string) ([]netip.Addr, error) {
	if a, ok := h[name]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// A proxy serving a unix socket, as the sandbox reaches it: a listed
// name is tunnelled to, an unlisted one refused, and both are recorded.
func ExampleProxy_Serve() {
	upstream, _ := net.Listen("tcp", "127.0.0.1:0")
	defer upstream.Close()
	port := upstream.Addr().(*net.TCPAddr).Port

	var mu sync.Mutex
	var recs []proxy.Conn
	p, err := proxy.New(proxy.Config{
		Allow:    []string{fmt.Sprintf("api.example.test:%d", port)},
		Resolver: hosts{"api.example.test": "127.0.0.1"},
		Record:   func(c proxy.Conn) { mu.Lock(); recs = append(recs, c); mu.Unlock() },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "sgpx")
	defer os.RemoveAll(dir)
	ln, _ := net.Listen("unix", filepath.Join(dir, "proxy.sock"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Serve(ctx, ln) }()

	for _, host := range []string{"api.example.test", "evil.example.test"} {
		c, _ := net.Dial("unix", filepath.Join(dir, "proxy.sock"))
		fmt.Fprintf(c, "CONNECT %s:%d HTTP/1.1\r\n\r\n", host, port)
		resp, _ := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: "CONNECT"})
		fmt.Printf("%s %d code=%q\n", host, resp.StatusCode, resp.Header.Get("X-Stepgate-Proxy-Code"))
		c.Close()
	}
	cancel()
	<-done
	// Records arrive as attempts end: a tunnel ends after its upstream.
	sort.Slice(recs, func(i, j int) bool { return recs[i].Verdict < recs[j].Verdict })
	for _, r := range recs {
		host, _, _ := net.SplitHostPort(r.Authority)
		fmt.Printf("%s %s %s code=%q ip=%q\n", r.Form, host, r.Verdict, r.Code, r.IP)
	}
	// Output:
	// api.example.test 200 code=""
	// evil.example.test 403 code="not_allowed"
	// connect api.example.test allowed code="" ip="127.0.0.1"
	// connect evil.example.test refused code="not_allowed" ip=""
}
