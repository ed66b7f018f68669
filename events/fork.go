package events

// TypeStepCopied is the wire name of [StepCopied].
const TypeStepCopied = "StepCopied"

// ForkedFrom names where a forked run was copied from: the source run, the
// last step copied and the source's last commit the copy includes. It is
// recorded in the fork's [RunStarted] (an optional field: a run that is not
// a fork has none, and a build that predates forks reads the fork as an
// ordinary run).
type ForkedFrom struct {
	Run    string `json:"run"`
	Step   int    `json:"step"`
	Commit string `json:"commit"`
}

// StepCopied opens each copied step's commit in a forked run: the step of
// the source run it copies and the ids of the source commits whose events
// the commit carries (in their order). The commit's other events are those
// commits' calls, verdicts, results, state commands and StepFinalized, as
// recorded: nothing ran again. A build that predates forks skips it.
type StepCopied struct {
	Run     string   `json:"run"`
	Step    int      `json:"step"`
	Commits []string `json:"commits"`
}

// EventType implements [Event].
func (StepCopied) EventType() string { return TypeStepCopied }
