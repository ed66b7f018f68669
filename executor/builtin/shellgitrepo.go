package builtin

import (
	"strings"
)

// Repositories a git command names. A local repository's hooks and
// configuration run as the user's: `git push ./r` runs r/hooks/pre-receive
// (git-receive-pack runs in r; safe.bareRepository does not apply to it), a
// bare repository a model wrote anywhere in the location, where no
// protected path covers it. A local URL recorded as a remote (clone's
// origin, remote add, fetch --set-upstream) makes a later `git push` do the
// same. So a repository or URL that is not a network one asks, and so does
// a bare word that is not a remote of the repository's configuration
// (git reads it as a path: see gitRemoteConfigured).

// gitRepoValues are, per subcommand, its options that take a value in the
// next word (long names, and short letters), so that the first positional
// word is found.
var gitRepoValues = map[string]struct {
	long  []string
	short string
}{
	"clone": {[]string{"origin", "branch", "upload-pack", "reference", "reference-if-able", "config", "depth", "jobs",
		"server-option", "filter", "shallow-since", "shallow-exclude", "separate-git-dir", "template", "bundle-uri"}, "obucj"},
	"fetch": {[]string{"depth", "deepen", "shallow-since", "shallow-exclude", "negotiation-tip", "refmap", "jobs",
		"submodule-prefix", "recurse-submodules-default", "upload-pack", "server-option", "filter"}, "jo"},
	"pull": {[]string{"depth", "deepen", "shallow-since", "shallow-exclude", "negotiation-tip", "refmap", "jobs",
		"upload-pack", "server-option", "strategy", "strategy-option", "cleanup"}, "joXs"},
	"push":      {[]string{"push-option", "receive-pack", "exec", "repo"}, "o"},
	"ls-remote": {[]string{"upload-pack", "server-option", "sort"}, "o"},
	"remote":    {[]string{}, "tm"},
}

// gitRepoArgs judges the repositories sub names in args: it returns why
// the whole text must ask, or "", and the bare words that name a
// repository unless they are a remote's name (to be looked up).
func gitRepoArgs(sub string, args []string) (string, []string) {
	spec, ok := gitRepoValues[sub]
	if !ok {
		return "", nil
	}
	pos, repo := gitPositionals(args, spec.long, spec.short)
	if repo != "" { // push --repo=…
		pos = append([]string{repo}, pos...)
	}
	switch sub {
	case "clone": // the source; the last of two or more is the directory
		src := pos
		if len(pos) > 1 {
			src = pos[:len(pos)-1]
		}
		for _, u := range src {
			if !gitNetworkURL(u) {
				return "git clone of a local repository or remote helper " + u + ": its origin runs its hooks on a push", nil
			}
		}
	case "remote":
		if len(pos) >= 3 && (pos[0] == "add" || pos[0] == "set-url") && !gitNetworkURL(pos[2]) {
			return "git remote " + pos[0] + " with a local URL or remote helper " + pos[2], nil
		}
	default: // fetch, pull, push, ls-remote: the repository, then refspecs
		var words []string
		for i, u := range pos {
			switch {
			case gitHelperURL(u) || gitLocalShape(u):
				return "git " + sub + " to a local repository or remote helper " + u + ": its hooks and configuration run", nil
			case i == 0 && !gitNetworkURL(u):
				if strings.ContainsAny(u, "/\\") {
					return "git " + sub + " to a local repository " + u + ": its hooks and configuration run", nil
				}
				words = append(words, u)
			}
		}
		return "", words
	}
	return "", nil
}

// gitPositionals returns the words of args that are not options or their
// values (long and short name the options taking the next word as value;
// an abbreviation of one counts), and the value of --repo.
func gitPositionals(args, long []string, short string) (pos []string, repo string) {
	for i := 0; i < len(args); i++ {
		v := args[i]
		switch {
		case v == "--":
			return append(pos, args[i+1:]...), repo
		case strings.HasPrefix(v, "--"):
			name, val, eq := strings.Cut(v[2:], "=")
			takes := false
			for _, l := range long {
				takes = takes || (name != "" && strings.HasPrefix(l, name))
			}
			isRepo := takes && len(name) >= 3 && strings.HasPrefix("repo", name)
			switch {
			case !takes:
			case eq:
				if isRepo {
					repo = val
				}
			case i+1 < len(args):
				if isRepo {
					repo = args[i+1]
				}
				i++
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			for j := 1; j < len(v); j++ {
				if strings.IndexByte(short, v[j]) >= 0 {
					if j == len(v)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
		default:
			pos = append(pos, v)
		}
	}
	return pos, repo
}

// gitNetworkURL reports a URL of a repository on another machine: one of
// git's network schemes, or the scp form [user@]host:path.
func gitNetworkURL(u string) bool {
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		switch strings.ToLower(scheme) {
		case "http", "https", "ssh", "git", "ftp", "ftps", "git+ssh", "ssh+git":
			return rest != "" && !strings.HasPrefix(rest, "-")
		}
		return false
	}
	i := strings.IndexByte(u, ':')
	if i <= 0 || strings.HasPrefix(u, "-") || gitHelperURL(u) {
		return false
	}
	if j := strings.IndexAny(u, "/\\"); j >= 0 && j < i {
		return false // a path with a colon in it
	}
	return true
}

// gitHelperURL reports <transport>::<address>, which runs the program
// git-remote-<transport>.
func gitHelperURL(u string) bool {
	t, _, ok := strings.Cut(u, "::")
	if !ok || t == "" {
		return false
	}
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// gitLocalShape reports a word that can only be a local path: absolute,
// relative from . or .., from ~, or a file: URL.
func gitLocalShape(u string) bool {
	switch {
	case u == "." || u == "..", strings.HasPrefix(u, "/"), strings.HasPrefix(u, "./"), strings.HasPrefix(u, "../"),
		strings.HasPrefix(u, "~"), strings.HasPrefix(strings.ToLower(u), "file:"), strings.HasPrefix(u, "\\"):
		return true
	}
	return false
}
