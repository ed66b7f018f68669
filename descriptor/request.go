package descriptor

// Request is one permission request raised by a tool call.
type Request struct {
	Action    string   `json:"action"`
	Resources []string `json:"resources"`
	Save      []string `json:"save,omitempty"` // patterns saved when the human replies "always"
}
