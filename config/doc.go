// Package config reads Stepgate's configuration files — YAML or JSON — and
// layers them: built-in agent defaults, then the user's file
// ($XDG_CONFIG_HOME/stepgate/config.yaml), then the project's
// (.stepgate/config.yaml in the location). A later layer's rules come after
// an earlier one's, so under last-match-wins they override it; per-run
// overrides, which may only narrow, come last (in commands). Every rule
// keeps its source. A project's layer is the exception: unless the user's
// file names its location in trusted_projects, it only narrows (see
// [Resolve]: its rules are gate.SourceProjectNarrowing rules, decided apart,
// the stricter decision holding), and [NotGranted] says what it asked for
// and did not get. Unknown keys and bad values are errors naming the file,
// the line and the key — never silently ignored.
//
// Protected paths (protected_paths: {add, remove}; defaults
// [DefaultProtectedPaths], and the user's file always) end every resolved
// ruleset as protections (gate.SourceProtected): a write there asks whatever
// the rules say, and an "always" saves nothing for it. Any layer may add;
// only the user's file may remove, and a project file that tries is an
// error. A project file reached through a symlink is refused.
//
// MCP servers (mcp: {NAME: {command, env} | {url, headers}, trust,
// deny_all, allow, ticket_ttl}) combine into [MCPServer]s (see
// [ResolveMCP]). A project's file is untrusted input: it may declare a
// server, but the host starts a server it declares (stdio or HTTP) only
// when the user's file names it in mcp_project_servers; it may not trust a server, use a secret
// reference, or replace how a server the user's file declares is reached —
// only narrow it. Values may hold secret://NAME references (env and
// headers, the user's file only), kept as written here and resolved by
// [Secrets] at the moment of use into a [ResolvedServer] that prints only
// the references; config resolves no secret into anything it stores.
package config

//go:generate go run ./internal/keydoc/gen -o ../docs/reference/config-keys.md
