package mcp

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>.
const Prefix = "mcp__"

// Sanitize returns tool with every byte outside [A-Za-z0-9_-] replaced by _,
// so a server's tool name fits the descriptor name rule's alphabet.
func Sanitize(tool string) string {
	b := []byte(tool)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// FullName is the engine's name of a server's tool: mcp__<server>__<sanitised tool>.
// It is also the tool's permission action. The result may still fail the
// name rule (too long); such a tool is skipped.
func FullName(server, tool string) string {
	return Prefix + server + "__" + Sanitize(tool)
}
