package gate

// Rulesets shared by the tests, after the spec's configuration example.

// buildDefaults is the built-in build agent: allow everything, ask before
// leaving the location except for the tool-output and temp directories, and
// ask before reading .env files but not .env.example.
func buildDefaults() Ruleset {
	return Ruleset{
		{Action: "*", Resource: "*", Effect: Allow, Source: SourceDefault},
		{Action: "external_directory", Resource: "*", Effect: Ask, Source: SourceDefault},
		{Action: "external_directory", Resource: "/var/lib/stepgate/tool-output/*", Effect: Allow, Source: SourceDefault},
		{Action: "external_directory", Resource: "/tmp/*", Effect: Allow, Source: SourceDefault},
		{Action: "read", Resource: "*", Effect: Allow, Source: SourceDefault},
		{Action: "read", Resource: "*.env", Effect: Ask, Source: SourceDefault},
		{Action: "read", Resource: "*.env.*", Effect: Ask, Source: SourceDefault},
		{Action: "read", Resource: "*.env.example", Effect: Allow, Source: SourceDefault},
	}
}

// projectBash is a project configuration for bash: ask by default, allow
// some read-only commands, deny deleting files.
func projectBash() Ruleset {
	return Ruleset{
		{Action: "bash", Resource: "*", Effect: Ask, Source: SourceProject},
		{Action: "bash", Resource: "git status *", Effect: Allow, Source: SourceProject},
		{Action: "bash", Resource: "go test *", Effect: Allow, Source: SourceProject},
		{Action: "bash", Resource: "rm *", Effect: Deny, Source: SourceProject},
		{Action: "edit", Resource: "*", Effect: Ask, Source: SourceProject},
	}
}

// configured is the build agent with the project's bash rules on top.
func configured() Ruleset {
	return append(buildDefaults(), projectBash()...)
}

// savedRule is a saved "always" approval.
func savedRule(action, resource string) Rule {
	return Rule{Action: action, Resource: resource, Effect: Allow, Source: SourceSaved}
}
