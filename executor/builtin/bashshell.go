package builtin

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
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
// and traces (CDPATH, GLOBIGNORE, PS4). It adds git's safe.bareRepository
// = explicit (after any GIT_CONFIG_KEY_n the environment already sets):
// otherwise git takes a directory holding HEAD, config, objects/ and refs/
// for a bare repository and obeys its config, so a model that wrote those
// files outside .git/ and ran an allowed `git -p config -l` there would
// run its core.pager. Changing or unsetting GIT_CONFIG_* in the command,
// or dropping the environment (env -i), asks (see setsVar).
func bashEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+3)
	count := 0
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		switch {
		case name == "BASH_ENV" || name == "ENV" || name == "SHELLOPTS" || name == "BASHOPTS" ||
			name == "POSIXLY_CORRECT" || name == "CDPATH" || name == "GLOBIGNORE" || name == "PS4":
		case strings.HasPrefix(name, "BASH_FUNC_"):
		case name == "GIT_CONFIG_COUNT":
			if n, err := strconv.Atoi(value); err == nil && n > 0 {
				count = n
			}
		default:
			out = append(out, kv)
		}
	}
	return append(out, fmt.Sprintf("GIT_CONFIG_COUNT=%d", count+1),
		fmt.Sprintf("GIT_CONFIG_KEY_%d=safe.bareRepository", count), fmt.Sprintf("GIT_CONFIG_VALUE_%d=explicit", count))
}
