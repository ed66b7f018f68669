package main

import (
	"net/url"
	"regexp"
	"strings"
)

// hintFlags are the connection flags a printed hint repeats, in this
// order, when the user gave them: never --password (a hint is printed, and
// copied), and a URL's user information is dropped (it may hold a password
// or a token); the credentials come back from the environment or the files
// the hint names.
var hintFlags = []string{"nats", "data", "user", "creds", "password-file", "inbox-prefix", "tls-cert", "tls-key", "tls-ca"}

// hint is the connection flags the user gave, as a command line's tail
// (" --nats nats://127.0.0.1:4222 --user approver", "" for none): appended
// to every command the binary suggests, so that the suggestion, run as
// printed, talks to the engine this one talked to.
func (f *connFlags) hint() string {
	if f.fs == nil {
		return ""
	}
	var b strings.Builder
	for _, name := range hintFlags {
		fl := f.fs.Lookup(name)
		if fl == nil || !f.given(name) {
			continue
		}
		v := fl.Value.String()
		switch name {
		case "data":
			if v == defaultData || f.natsURL != "" {
				continue
			}
		case "nats":
			v = withoutUserinfo(v)
		}
		b.WriteString(" --" + name + " " + shellQuote(v))
	}
	return b.String()
}

// withoutUserinfo is a comma-separated list of NATS URLs without their
// user information (user:password@ or token@).
func withoutUserinfo(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "@") {
			parts[i] = p
			continue
		}
		if u, err := url.Parse(p); err == nil && u.Host != "" {
			u.User = nil
			parts[i] = u.String()
			continue
		}
		scheme, rest, ok := strings.Cut(p, "://")
		if !ok {
			scheme, rest = "", p
		}
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			rest = rest[at+1:]
		}
		if ok {
			rest = scheme + "://" + rest
		}
		parts[i] = rest
	}
	return strings.Join(parts, ",")
}

// plainWord is a word a POSIX shell reads as itself.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote is s as one word of a POSIX shell command line.
func shellQuote(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
