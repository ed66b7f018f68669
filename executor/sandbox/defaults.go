package sandbox

import "path/filepath"

// DefaultReadOnly are the paths of a location that stay read-only even
// under WorkspaceWrite: git's hooks and configuration (a hook or a
// core.pager runs later, outside the sandbox), Stepgate's project files and
// the shell start-up files.
func DefaultReadOnly(location string) []string {
	names := []string{".git/hooks", ".git/config", ".stepgate",
		".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".envrc"}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(location, n)
	}
	return out
}

// DefaultDenied are the paths of home neither readable nor writable: the
// user's keys and cloud credentials and Stepgate's own configuration. The
// engine adds its data directory, its secrets file and the NATS
// credentials it uses.
func DefaultDenied(home string) []string {
	names := []string{".ssh", ".aws", ".config/gcloud", ".netrc", ".config/stepgate", ".gnupg", ".docker/config.json", ".kube"}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(home, n)
	}
	return out
}
