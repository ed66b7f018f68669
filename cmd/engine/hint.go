package main

import (
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
// user information (user:password@ or token@): of each, what follows its
// last "@", after the scheme (a NATS URL has no path that could hold one).
func withoutUserinfo(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		at := strings.LastIndex(p, "@")
		if at < 0 {
			parts[i] = p
			continue
		}
		scheme, _, ok := strings.Cut(p, "://")
		if ok && !strings.Contains(scheme, "@") {
			parts[i] = scheme + "://" + p[at+1:]
		} else {
			parts[i] = p[at+1:]
		}
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
