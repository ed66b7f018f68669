package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// A hint repeats the connection flags given, in a fixed order, quoted for
// a shell, without --password and without a URL's user information; the
// default --data, and --data beside --nats, are left out.
func TestHint(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--data", defaultData}, ""},
		{[]string{"--data", "d"}, " --data d"},
		{[]string{"--data", "my data", "--timeout", "3s"}, " --data 'my data'"},
		{[]string{"--nats", "nats://u:pw@h:4222,nats://tok@h2:4222", "--data", "d"}, " --nats nats://h:4222,nats://h2:4222"},
		{[]string{"--tls-ca", "ca.pem", "--user", "approver", "--password", "pw", "--nats", "tls://h:4222", "--inbox-prefix", "_INBOX.approver",
			"--creds", "c's.creds", "--password-file", "pw.txt", "--tls-cert", "c.pem", "--tls-key", "k.pem"},
			" --nats tls://h:4222 --user approver --creds 'c'\\''s.creds' --password-file pw.txt --inbox-prefix _INBOX.approver --tls-cert c.pem --tls-key k.pem --tls-ca ca.pem"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var cf connFlags
		cf.registerClient(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if got := cf.hint(); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.args, got, tt.want)
		}
	}
}

// FuzzWithoutUserinfo: whatever the URLs, what a hint prints of them
// holds no user information: no "@" is left before a host.
func FuzzWithoutUserinfo(f *testing.F) {
	for _, s := range []string{"nats://u:p@h:4222", "nats://tok@h", "u:p@h:4222", "nats://a@b@h,tls://x:y@z", "nats://h:4222", "%zz@h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := withoutUserinfo(s)
		for _, part := range strings.Split(out, ",") {
			if strings.Contains(part, "@") {
				t.Fatalf("withoutUserinfo(%q) = %q: user information left", s, out)
			}
		}
	})
}
