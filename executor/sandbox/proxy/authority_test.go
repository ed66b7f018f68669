package proxy

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseAuthority(t *testing.T) {
	cases := []struct {
		in      string
		def     uint16
		want    string // canonical, or "" for an error
		numeric bool   // the error is errNumericHost
		why     string
	}{
		{"example.com:443", 0, "example.com:443", false, "a name"},
		{"EXAMPLE.com.:443", 0, "example.com:443", false, "case and the trailing dot are one name"},
		{"example.com", 80, "example.com:80", false, "the default port"},
		{"example.com:", 80, "example.com:80", false, "an empty port is the default"},
		{"example.com", 0, "", false, "CONNECT needs a port"},
		{"example.com:0", 0, "", false, "port 0"},
		{"example.com:65536", 0, "", false, "port out of range"},
		{"example.com:+443", 0, "", false, "a sign is not a digit"},
		{"example.com:0443", 0, "example.com:443", false, "leading zeros are the same port"},
		{"127.0.0.1:80", 0, "127.0.0.1:80", false, "IPv4"},
		{"[::1]:80", 0, "[::1]:80", false, "IPv6"},
		{"[::ffff:127.0.0.1]:80", 0, "127.0.0.1:80", false, "a mapped IPv4 is the IPv4"},
		{"[::1]", 80, "[::1]:80", false, "IPv6 with the default port"},
		{"::1:80", 0, "", false, "IPv6 unbracketed"},
		{"[127.0.0.1]:80", 0, "", false, "IPv4 bracketed"},
		{"[example.com]:80", 0, "", false, "a name bracketed"},
		{"[fe80::1%eth0]:80", 0, "", false, "a zone"},
		{"0x7f.1:80", 0, "", true, "hex and short IPv4"},
		{"0x7f000001:80", 0, "", true, "one hex number"},
		{"2130706433:80", 0, "", true, "one decimal number"},
		{"0177.0.0.1:80", 0, "", true, "octal"},
		{"127.1:80", 0, "", true, "short IPv4"},
		{"1.2.3.0x4:80", 0, "", true, "hex last part"},
		{"a.0x:80", 0, "", true, "a bare 0x is a number in the URL standard"},
		{"1e100.net:443", 0, "1e100.net:443", false, "digits inside a name are fine"},
		{"a..b:80", 0, "", false, "an empty label"},
		{"a b:80", 0, "", false, "a space"},
		{"a%2eb:80", 0, "", false, "a percent"},
		{"ex\u00e4mple.com:80", 0, "", false, "not ASCII (send the A-label)"},
		{"user@example.com:80", 0, "", false, "userinfo"},
		{":80", 0, "", false, "no host"},
	}
	for _, tc := range cases {
		got, err := parseAuthority(tc.in, tc.def)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%q (%s): got %s, want an error", tc.in, tc.why, got)
		case tc.want != "" && err != nil:
			t.Errorf("%q (%s): %v", tc.in, tc.why, err)
		case tc.want != "" && got.String() != tc.want:
			t.Errorf("%q (%s): got %s, want %s", tc.in, tc.why, got, tc.want)
		case err != nil && errors.Is(err, errNumericHost) != tc.numeric:
			t.Errorf("%q (%s): error %v, numeric=%v", tc.in, tc.why, err, tc.numeric)
		}
	}
}

func TestClassify(t *testing.T) {
	table := specialRanges()
	for _, tc := range []struct{ addr, want string }{
		{"8.8.8.8", ""},
		{"93.184.215.14", ""},
		{"2606:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "private"},
		{"169.254.169.254", "link-local"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.128.0.1", ""},
		{"0.0.0.0", "this network"},
		{"224.0.0.1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"::", "unspecified"},
		{"::1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"64:ff9b::a00:1", "NAT64"},
		{"2002:7f00:1::", "6to4"},
		{"fd12::1", "unique-local"},
		{"fe80::1", "link-local"},
		{"ff02::1", "multicast"},
	} {
		if got := classify(table, netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("classify(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
