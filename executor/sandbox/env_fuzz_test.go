package sandbox

import (
	"strings"
	"testing"
)

// FuzzScrubEnv: whatever the engine's environment holds, the command's
// never carries a credential's name, always sets TMPDIR=/tmp, and keeps
// PATH as it was.
func FuzzScrubEnv(f *testing.F) {
	f.Add("NATS_PASSWORD=x\x00PATH=/bin\x00OPENAI_API_KEY=k")
	f.Add("nats_user=x\x00GITHUB_TOKEN=t\x00LC_ALL=C\x00DB_PASSWORD_FILE=/f\x00AWS_SECRET_ACCESS_KEY=s")
	f.Add("STEPGATE_SECRETS=/s\x00HOME=/root\x00=x\x00TERM")
	f.Fuzz(func(t *testing.T, joined string) {
		environ := strings.Split(joined, "\x00")
		out := scrubEnv(environ)
		if out[len(out)-1] != "TMPDIR=/tmp" {
			t.Fatalf("TMPDIR: %q", out)
		}
		for _, kv := range out[:len(out)-1] {
			name, _, _ := strings.Cut(kv, "=")
			up := strings.ToUpper(name)
			for _, bad := range []string{"PASSWORD", "SECRET"} {
				if strings.Contains(up, bad) {
					t.Fatalf("%q passed", kv)
				}
			}
			if strings.HasPrefix(up, "NATS_") || strings.HasPrefix(up, "STEPGATE_") ||
				strings.HasSuffix(up, "_TOKEN") || strings.HasSuffix(up, "_API_KEY") {
				t.Fatalf("%q passed", kv)
			}
		}
		if want, got := lastPath(environ), lastPath(out); want != got {
			t.Fatalf("PATH %q, want %q", got, want)
		}
	})
}

func lastPath(environ []string) string {
	return envValue(environ, "PATH")
}
