package descriptor

// Request is one permission request raised by a tool call.
type Request struct {
	Action    string   `json:"action"`
	Resources []string `json:"resources"`
	Save      []string `json:"save,omitempty"` // patterns saved when the human replies "always"
	// Ask makes the request need a human's confirmation even where the rules
	// allow it (a rule that denies still denies): for what the tool could not
	// understand well enough to judge, such as a shell command that does not
	// parse.
	Ask bool `json:"ask,omitempty"`
	// Root, when set, says the request's relative resources are paths inside
	// the location whose real path Root is ('/' form): a relative resource r
	// is also the absolute path Root/r ("." is Root itself), and the gate
	// matches it in both forms, so a rule written with the absolute path
	// covers it too. Absolute resources (paths outside the location) are
	// matched as they are.
	Root string `json:"root,omitempty"`
}
