package events

// Subject prefixes and helpers. Every subject of the log lies under Root.
const (
	// Root is the subject space of the stream ("sg.>").
	Root = "sg"
	// AllSubjects is the stream's subject filter.
	AllSubjects = Root + ".>"
	// OutputSubject carries output-file sweeps.
	OutputSubject = Root + ".output"
)

// RunSubject is the subject of everything run id does.
func RunSubject(run string) string { return Root + ".run." + run }

// RegistrySubject is the subject of location-layer registrations of a scope.
func RegistrySubject(scope string) string { return Root + ".registry." + scope }

// GrantSubject is the subject of saved approvals made outside a run.
func GrantSubject(project string) string { return Root + ".grant." + project }

// IsRunSubject reports whether subject is a run subject and returns its run id.
func IsRunSubject(subject string) (string, bool) {
	const p = Root + ".run."
	if len(subject) > len(p) && subject[:len(p)] == p {
		return subject[len(p):], true
	}
	return "", false
}
