package config_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// FuzzSecretRefs: the references found are exactly the prefixes in the
// value, each spanning secret://NAME with a valid NAME, in order; an error
// only for a prefix without a name.
func FuzzSecretRefs(f *testing.F) {
	for _, s := range []string{"Bearer secret://TOKEN", "secret://A secret://_b9.", "secret://", "secret://9", "xsecret://secret://A", "SECRET://A", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		refs, err := config.SecretRefs(v)
		if err != nil {
			if !strings.Contains(v, config.SecretPrefix) {
				t.Fatalf("error %v for a value without the prefix", err)
			}
			return
		}
		prev := 0
		for _, r := range refs {
			if r.Start < prev || r.End > len(v) || v[r.Start:r.End] != config.SecretPrefix+r.Name || r.Name == "" {
				t.Fatalf("ref %+v in %q", r, v)
			}
			if strings.Contains(v[prev:r.Start], config.SecretPrefix) {
				t.Fatalf("a prefix before %+v was skipped in %q", r, v)
			}
			if r.End < len(v) {
				if c := v[r.End]; c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
					t.Fatalf("ref %+v ends before a name byte in %q", r, v)
				}
			}
			prev = r.End
		}
		if strings.Contains(v[prev:], config.SecretPrefix) {
			t.Fatalf("a prefix after the last reference was skipped in %q", v)
		}
	})
}

// FuzzParseMCP: the mcp section as the user's file and as the project's.
// An error names the file and a line; a project file accepted trusts no
// server and holds no secret reference, and every server is reached one
// way.
func FuzzParseMCP(f *testing.F) {
	f.Add("mcp:\n  s: {command: [a, b], env: {T: \"secret://T\"}, trust: true, allow: [\"read*\"], ticket_ttl: 5m}\n")
	f.Add("mcp:\n  h: {url: \"https://127.0.0.1:1/mcp\", headers: {Authorization: \"Bearer secret://TOKEN\"}, deny_all: true}\nmcp_project_servers: [x]\nsecrets_file: s.yaml\n")
	f.Add("mcp:\n  s: {allow: [], trust: false}\n")
	f.Add(`{"mcp": {"s": {"url": "http://h/x", "headers": {"A": "b"}}}}`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, src := range []gate.Source{gate.SourceUser, gate.SourceProject} {
			file, err := config.Parse("f.yaml", []byte(text), src)
			if err != nil {
				var ce *config.Error
				if !errors.Is(err, config.ErrInvalid) || !errors.As(err, &ce) || ce.File != "f.yaml" || ce.Line < 1 ||
					!strings.HasPrefix(err.Error(), "f.yaml:"+strconv.Itoa(ce.Line)+": ") {
					t.Fatalf("error %q does not name the file and a line", err)
				}
				continue
			}
			layers := []*config.File{file}
			srvs, err := config.ResolveMCP(layers)
			if err != nil {
				if src == gate.SourceUser {
					t.Fatalf("a user file alone does not combine: %v", err)
				}
				continue
			}
			for _, s := range srvs {
				if (s.URL == "") == (s.Command == nil) || (s.URL != "" && s.Env != nil) || (s.Command != nil && s.Headers != nil) {
					t.Fatalf("server %+v is not reached exactly one way", s)
				}
				if src == gate.SourceProject && (s.Trust || strings.Contains(strings.Join(mapValues(s.Env, s.Headers), " "), config.SecretPrefix)) {
					t.Fatalf("a project file declared %+v", s)
				}
				if src == gate.SourceProject && s.Command != nil && s.Enabled {
					t.Fatalf("a project stdio server runs without the user's file: %+v", s)
				}
				for _, v := range mapValues(s.Env, s.Headers) {
					if _, err := config.SecretRefs(v); err != nil {
						t.Fatalf("accepted a malformed reference %q: %v", v, err)
					}
				}
			}
		}
	})
}

func mapValues(ms ...map[string]string) []string {
	var out []string
	for _, m := range ms {
		for _, v := range m {
			out = append(out, v)
		}
	}
	return out
}
