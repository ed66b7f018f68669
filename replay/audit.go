package replay

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection/fold"
)

// ErrForeignCommit is a commit the audit does not read: a run commit on
// another run's subject, or an approval for another project than its
// subject's or its run's. [Auditor.Add] skips such a commit whole.
var ErrForeignCommit = errors.New("commit outside its subject")

// How a ticket was resolved, in an [AuditRow]: a person replied, or the
// engine did (another ticket's "always", a cascade from a rejection, the
// deadline, a tool no longer effective).
const (
	HowPerson  = "person"
	HowAuto    = events.ResolvedAuto
	HowCascade = events.ResolvedCascade
	HowExpired = events.ResolvedExpired
	HowStale   = events.ResolvedStale
)

// AuditRow is one decision of the log: a call, the verdict on it and why,
// the saved approval or the reply that let it through, and how long it
// took from its request to its result.
type AuditRow struct {
	// Time is when the verdict was committed.
	Time      time.Time `json:"time"`
	Run       string    `json:"run"`
	Project   string    `json:"project"`
	Step      int       `json:"step"`
	Call      string    `json:"call"`
	Tool      string    `json:"tool"`
	Action    string    `json:"action,omitempty"`
	Resources []string  `json:"resources,omitempty"`
	Verdict   string    `json:"verdict"`
	// Rule is the deciding rule as "action resource effect"; Source is its
	// layer (default, user, project, saved, run, protected).
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
	// Grant names the saved approvals that allowed the call: the one the
	// verdict's rule came from, or those whose saving approved its ticket.
	Grant  string `json:"grant,omitempty"`
	Ticket string `json:"ticket,omitempty"`
	// Principal is who replied to the ticket, or who saved the grant.
	Principal string `json:"principal,omitempty"`
	// Reply is the ticket's answer (once, always, reject, answer, or the
	// engine's outcome); How says who gave it (see HowPerson), By the
	// ticket whose reply resolved this one.
	Reply string `json:"reply,omitempty"`
	How   string `json:"how,omitempty"`
	By    string `json:"by,omitempty"`
	// DurationMs is from the commit that recorded the call's request to the
	// one that recorded its result (0 when both are one commit).
	DurationMs int64 `json:"duration_ms"`
	// Open is set for a call that had no result when the log (or its run)
	// ended.
	Open bool `json:"open,omitempty"`
	// OriginalArgs and EditedArgs are set when the approver changed the
	// call's arguments: the model's, and the ones that ran.
	OriginalArgs json.RawMessage `json:"original_args,omitempty"`
	EditedArgs   json.RawMessage `json:"edited_args,omitempty"`
	// ConfigVersion is the fleet configuration document's version the run
	// started under (RunStarted.ConfigVersion); 0 for a host's own file.
	ConfigVersion uint64 `json:"config_version,omitempty"`
	// RunSandbox is the sandbox profile the run pinned (RunStarted.Sandbox);
	// absent: off, or a run started before sandboxes.
	RunSandbox *events.SandboxProfile `json:"run_sandbox,omitempty"`
	// Sandbox is what the sandbox enforced on the call's command, the
	// profile it ran under and its proxied connections (the result's
	// events.SandboxRecord); absent for a call that ran no command
	// sandboxed.
	Sandbox *events.SandboxRecord `json:"sandbox,omitempty"`

	requested time.Time
	order     uint64 // the call's place among the requests the auditor read
}

// AuditFilter selects rows: a zero field selects every row.
type AuditFilter struct {
	// Project keeps the rows of runs of this project.
	Project string
	// Since keeps the rows whose verdict was committed at or after it.
	Since time.Time
}

func (f AuditFilter) keep(r *AuditRow) bool {
	return (f.Project == "" || r.Project == f.Project) && !r.Time.Before(f.Since)
}

// Auditor turns commits, in stream order, into audit rows. It keeps state
// per open run only (its project and its calls without a result) and the
// saved approvals, so its memory follows the open runs and the grants, not
// the length of the log. Not safe for concurrent use.
type Auditor struct {
	filter AuditFilter
	runs   map[string]*auditRun
	grants fold.Grants
	calls  uint64 // requests read
}

// auditRun is what the audit holds of one run until it ends.
type auditRun struct {
	project string
	// config is the configuration version the run started under, sandbox
	// the profile it pinned.
	config  uint64
	sandbox *events.SandboxProfile
	calls   map[callKey]*AuditRow
	tickets map[string]callKey
}

type callKey struct {
	step int
	call string
}

// NewAuditor returns an auditor whose rows pass f.
func NewAuditor(f AuditFilter) *Auditor {
	return &Auditor{filter: f, runs: map[string]*auditRun{}, grants: fold.Grants{}}
}

// Add reads commit c, stored under subject, and returns the rows it
// completes (calls that got their result, or every open call of a run that
// ended), in the commit's order. A commit outside its subject is skipped
// whole, with an error wrapping [ErrForeignCommit]; the auditor is as it
// was.
func (a *Auditor) Add(subject string, c *events.Commit) ([]AuditRow, error) {
	if c.Run == "" {
		return nil, a.addGrants(subject, c)
	}
	if run, ok := events.IsRunSubject(subject); !ok || run != c.Run {
		return nil, fmt.Errorf("commit %s of run %q on %s: %w", c.ID, c.Run, subject, ErrForeignCommit)
	}
	r := a.runs[c.Run]
	if r == nil {
		r = &auditRun{calls: map[callKey]*AuditRow{}, tickets: map[string]callKey{}}
		for _, e := range c.Events {
			if s, ok := e.(events.RunStarted); ok {
				r.project, r.config, r.sandbox = s.Project, s.ConfigVersion, s.Sandbox
			}
		}
	}
	for _, e := range c.Events {
		if s, ok := e.(events.ApprovalSaved); ok && s.Project != r.project {
			return nil, fmt.Errorf("commit %s of run %s saves an approval for project %q, not its own %q: %w", c.ID, c.Run, s.Project, r.project, ErrForeignCommit)
		}
	}
	a.runs[c.Run] = r
	var out []AuditRow
	for _, e := range c.Events {
		out = a.event(r, c, e, out)
	}
	return out, nil
}

// addGrants folds the approvals of a commit outside runs.
func (a *Auditor) addGrants(subject string, c *events.Commit) error {
	project, grantSubject := strings.CutPrefix(subject, events.GrantSubject(""))
	for _, e := range c.Events {
		switch e := e.(type) {
		case events.ApprovalSaved:
			if !grantSubject || e.Project != project {
				return fmt.Errorf("commit %s on %s saves an approval for project %q: %w", c.ID, subject, e.Project, ErrForeignCommit)
			}
		case events.GrantRevoked:
			if !grantSubject || e.Project != project {
				return fmt.Errorf("commit %s on %s revokes an approval of project %q: %w", c.ID, subject, e.Project, ErrForeignCommit)
			}
		}
	}
	for _, e := range c.Events {
		a.grants.Apply(e)
	}
	return nil
}

// event folds one event of run commit c into r and appends the rows it
// completes to out.
func (a *Auditor) event(r *auditRun, c *events.Commit, e events.Event, out []AuditRow) []AuditRow {
	switch e := e.(type) {
	case events.ToolCallRequested:
		a.calls++
		r.calls[callKey{c.Step, e.CallID}] = &AuditRow{Run: c.Run, Project: r.project, Step: c.Step, Call: e.CallID,
			Tool: e.Tool, ConfigVersion: r.config, RunSandbox: r.sandbox, requested: c.At, order: a.calls}
	case events.PermissionDecided:
		if row := r.calls[callKey{c.Step, e.CallID}]; row != nil {
			a.decided(row, r.project, c.At, &e)
		}
	case events.TicketIssued:
		k := callKey{c.Step, e.CallID}
		if row := r.calls[k]; row != nil {
			row.Ticket = e.ID
			r.tickets[e.ID] = k
		}
	case events.TicketResolved:
		if row := r.calls[r.tickets[e.Ticket]]; row != nil {
			a.resolved(row, r.project, &e)
		}
	case events.ApprovalSaved, events.GrantRevoked:
		a.grants.Apply(e)
	case events.ToolResultRecorded:
		k := callKey{c.Step, e.CallID}
		if row := r.calls[k]; row != nil {
			row.DurationMs = c.At.Sub(row.requested).Milliseconds()
			row.Sandbox = e.Sandbox
			out = a.emit(out, row)
			delete(r.calls, k)
			delete(r.tickets, row.Ticket)
		}
	case events.RunEnded:
		out = a.flush(out, r)
		delete(a.runs, c.Run)
	}
	return out
}

// decided records a verdict (the latest wins: a confirmation answered and
// then blocked on resume is recorded blocked).
func (a *Auditor) decided(row *AuditRow, project string, at time.Time, d *events.PermissionDecided) {
	row.Time, row.Verdict = at, d.Verdict
	row.Action, row.Resources = requests(d.Requests)
	row.Rule, row.Source, row.Grant = "", "", ""
	if d.Rule == nil {
		return
	}
	row.Rule = d.Rule.Action + " " + d.Rule.Resource + " " + d.Rule.Effect
	row.Source = d.Rule.Source
	if d.Rule.Source == "saved" {
		for _, g := range a.grants.Active(project) {
			if g.Action == d.Rule.Action && g.Resource == d.Rule.Resource {
				row.Grant, row.Principal = g.ID, g.Principal
				break
			}
		}
	}
}

// resolved records a ticket's answer.
func (a *Auditor) resolved(row *AuditRow, project string, t *events.TicketResolved) {
	row.Reply, row.By, row.Principal = t.Reply, t.By, t.Principal
	if t.Edit != nil {
		row.OriginalArgs, row.EditedArgs = t.Edit.Original, t.Edit.Args
	}
	switch t.Reply {
	case events.ResolvedAuto, events.ResolvedCascade, events.ResolvedExpired, events.ResolvedStale:
		row.How = t.Reply
	default:
		row.How = HowPerson
	}
	if t.Reply != events.ResolvedAuto || t.By == "" {
		return
	}
	var ids []string
	for _, g := range a.grants.Active(project) {
		if g.Ticket == t.By {
			ids = append(ids, g.ID)
		}
	}
	row.Grant = strings.Join(ids, " ")
}

// emit appends row to out if the filter keeps it.
func (a *Auditor) emit(out []AuditRow, row *AuditRow) []AuditRow {
	if a.filter.keep(row) {
		out = append(out, *row)
	}
	return out
}

// flush appends r's open calls, in the order they were requested, and forgets them.
func (a *Auditor) flush(out []AuditRow, r *auditRun) []AuditRow {
	open := make([]*AuditRow, 0, len(r.calls))
	for _, row := range r.calls {
		open = append(open, row)
	}
	slices.SortFunc(open, func(x, y *AuditRow) int { return cmp.Compare(x.order, y.order) })
	for _, row := range open {
		row.Open = true
		out = a.emit(out, row)
	}
	clear(r.calls)
	clear(r.tickets)
	return out
}

// Close returns the rows of every call still open, run by run in id
// order: the log ended before their results.
func (a *Auditor) Close() []AuditRow {
	ids := make([]string, 0, len(a.runs))
	for id := range a.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []AuditRow
	for _, id := range ids {
		out = a.flush(out, a.runs[id])
	}
	return out
}

// requests is the actions (distinct, comma-separated) and the resources of
// a verdict's requests.
func requests(rs []events.Request) (string, []string) {
	var actions, resources []string
	for _, r := range rs {
		if !slices.Contains(actions, r.Action) {
			actions = append(actions, r.Action)
		}
		resources = append(resources, r.Resources...)
	}
	return strings.Join(actions, ","), resources
}
