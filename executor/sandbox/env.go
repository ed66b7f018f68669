package sandbox

import (
	"slices"
	"strings"
)

// The test switches, read from the environment given to Command (never
// from the engine's own): they can only make a call refused, never weaker.
const (
	// EnvTestNoLandlock set to 1 makes Landlock count as unavailable:
	// every sandboxed call is refused by Command, and none runs.
	EnvTestNoLandlock = "STEPGATE_SANDBOX_TEST_NO_LANDLOCK"
	// EnvTestFault set to a stage ("mount", "landlock", "seccomp") makes
	// the helper fail there, as a kernel refusal would: the command does
	// not run and Wait returns sandbox_unavailable.
	EnvTestFault = "STEPGATE_SANDBOX_TEST_FAULT"
)

// scrubEnv keeps of environ only the allow-listed names (PATH, HOME, LANG,
// LC_*, TERM, TZ, USER, LOGNAME, git's GIT_CONFIG_COUNT/KEY_n/VALUE_n that
// the bash tool sets) and never a credential (NATS_*, STEPGATE_*,
// *_API_KEY, *_TOKEN, *PASSWORD*, *SECRET*), then sets TMPDIR=/tmp and the
// given extra variables (the proxy's).
func scrubEnv(environ []string, extra ...string) []string {
	out := make([]string, 0, len(environ)+len(extra)+1)
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && allowedVar(name) {
			out = append(out, kv)
		}
	}
	out = append(out, "TMPDIR=/tmp")
	return append(out, extra...)
}

// allowedVar reports whether a variable may reach a sandboxed command.
func allowedVar(name string) bool {
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "NATS_") || strings.HasPrefix(up, "STEPGATE_") ||
		strings.HasSuffix(up, "_API_KEY") || strings.HasSuffix(up, "_TOKEN") ||
		strings.Contains(up, "PASSWORD") || strings.Contains(up, "SECRET") {
		return false
	}
	switch name {
	case "PATH", "HOME", "LANG", "TERM", "TZ", "USER", "LOGNAME", "GIT_CONFIG_COUNT":
		return true
	}
	return strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "GIT_CONFIG_KEY_") ||
		strings.HasPrefix(name, "GIT_CONFIG_VALUE_")
}

// proxyEnv is the proxy variables pointing at the relay's address.
func proxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u, "NO_PROXY=", "no_proxy="}
}

// envValue is the last value of name in environ, as getenv finds it.
func envValue(environ []string, name string) string {
	for _, kv := range slices.Backward(environ) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
