package mcpgw

import (
	"net"
	"strings"
	"testing"
)

func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"127.0.0.2:0", false, true},
		{"[::1]:8080", false, true},
		{"localhost:8080", false, true},
		{"LOCALHOST:1", false, true},
		{"0.0.0.0:8080", false, false},
		{":8080", false, false}, // every address
		{"[::]:8080", false, false},
		{"192.0.2.1:8080", false, false},
		{"192.0.2.1:8080", true, true},
		{":8080", true, true},
		{"example.internal:8080", true, false}, // a name could resolve anywhere
		{"127.0.0.1", false, false},            // no port
	}
	for _, tt := range tests {
		err := CheckListen(tt.addr, tt.remote)
		if (err == nil) != tt.ok {
			t.Errorf("CheckListen(%q, remote=%v) = %v, want ok=%v", tt.addr, tt.remote, err, tt.ok)
		}
	}
	if err := CheckListen("0.0.0.0:1", false); err == nil || !strings.Contains(err.Error(), "--listen-remote") {
		t.Errorf("the refusal does not name --listen-remote: %v", err)
	}
}

// FuzzCheckListen: CheckListen never panics, and what it accepts without
// remote is loopback: localhost, or a loopback IP literal.
func FuzzCheckListen(f *testing.F) {
	for _, s := range []string{"127.0.0.1:0", "[::1]:1", "localhost:80", "0.0.0.0:1", ":1", "[::ffff:127.0.0.1]:1", "[fe80::1%lo]:1", "a:b:c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if CheckListen(addr, false) != nil {
			return
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("accepted %q, which does not split: %v", addr, err)
		}
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("accepted %q without remote: %q is not loopback", addr, host)
		}
	})
}
