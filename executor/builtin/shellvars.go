package builtin

import "strings"

// codeVars are environment and shell variables whose value decides what
// later commands execute: the command search (PATH, BASH_CMDS), the
// dynamic loader, shell startup and trace code, and the programs git and
// other tools start (pagers, editors, ssh, askpass helpers). Setting one in
// a command — by an assignment, a declaration, env or sudo, a for loop or a
// builtin that assigns (read, printf -v, mapfile, getopts), or ${X:=…} —
// asks with the whole text: an allowed `git log` after it runs what the
// value says.
var codeVars = map[string]bool{
	"PATH": true, "ENV": true, "SHELLOPTS": true, "PS4": true, "PROMPT_COMMAND": true,
	"PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true, "BROWSER": true,
	"LESSOPEN": true, "LESSCLOSE": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true,
	"PYTHONSTARTUP": true, "PYTHONPATH": true, "NODE_OPTIONS": true, "PERL5OPT": true, "PERL5LIB": true,
	"RUBYOPT": true, "CDPATH": true, "HOME": true, "XDG_CONFIG_HOME": true, "POSIXLY_CORRECT": true,
}

// isCodeVar reports a variable of codeVars, or one of the GIT_, LD_ and
// BASH_ families (GIT_SSH_COMMAND, LD_PRELOAD, BASH_ENV, BASH_CMDS, …).
func isCodeVar(name string) bool {
	return codeVars[name] || strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "BASH_")
}

// setsVar asks when a command sets a variable of isCodeVar.
func (s *shellScanner) setsVar(name string) {
	if isCodeVar(name) {
		s.out.ask("setting " + name + ", which decides what later commands run")
	}
}
