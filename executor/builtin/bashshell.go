package builtin

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoBash is the result of a bash call on a host without bash: the
// command was analysed as bash, so it never runs with another shell.
var ErrNoBash = errors.New("bash is not installed on this host (not found on PATH); the bash tool runs commands only with bash, never with another shell")

// bashPath finds bash on PATH.
func bashPath() (string, error) {
	p, err := exec.LookPath("bash")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoBash, err)
	}
	return p, nil
}

// bashEnv is environ without what would make bash run code or read the
// command otherwise than it was analysed: startup files (BASH_ENV, ENV),
// inherited options (SHELLOPTS, BASHOPTS, POSIXLY_CORRECT), exported
// functions (BASH_FUNC_*), and the variables that change cd targets, globs
// and traces (CDPATH, GLOBIGNORE, PS4).
func bashEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "BASH_ENV" || name == "ENV" || name == "SHELLOPTS" || name == "BASHOPTS" ||
			name == "POSIXLY_CORRECT" || name == "CDPATH" || name == "GLOBIGNORE" || name == "PS4":
		case strings.HasPrefix(name, "BASH_FUNC_"):
		default:
			out = append(out, kv)
		}
	}
	return out
}
