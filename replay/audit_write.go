package replay

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Audit formats.
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
)

// AuditColumns are the CSV header, in column order; the JSON names of
// [AuditRow]'s fields are the same. In CSV, resources are a JSON array of
// strings (a resource may hold any character) and open is "true" or empty;
// original_args and edited_args are JSON, set only for a call approved with
// edited arguments; config_version is empty for a run whose rules came from
// its host's own user file; run_sandbox and sandbox are JSON (the run's
// pinned profile, the call's sandbox record), empty when absent. Columns
// are only ever added at the end.
var AuditColumns = []string{"time", "run", "project", "step", "call", "tool", "action", "resources", "verdict",
	"rule", "source", "grant", "ticket", "principal", "reply", "how", "by", "duration_ms", "open",
	"original_args", "edited_args", "config_version", "run_sandbox", "sandbox"}

// AuditWriter writes audit rows as JSON lines or CSV, one row at a time.
type AuditWriter struct {
	jsonl *json.Encoder
	csv   *csv.Writer
}

// NewAuditWriter returns a writer of format (FormatJSONL or FormatCSV) on
// w; a CSV starts with its header.
func NewAuditWriter(w io.Writer, format string) (*AuditWriter, error) {
	switch format {
	case FormatJSONL:
		return &AuditWriter{jsonl: json.NewEncoder(w)}, nil
	case FormatCSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(AuditColumns); err != nil {
			return nil, fmt.Errorf("audit csv header: %w", err)
		}
		return &AuditWriter{csv: cw}, nil
	}
	return nil, fmt.Errorf("audit format %q: want %s or %s", format, FormatJSONL, FormatCSV)
}

// Write writes one row.
func (w *AuditWriter) Write(r *AuditRow) error {
	if w.jsonl != nil {
		if err := w.jsonl.Encode(r); err != nil {
			return fmt.Errorf("audit row: %w", err)
		}
		return nil
	}
	open := ""
	if r.Open {
		open = "true"
	}
	configVersion := ""
	if r.ConfigVersion > 0 {
		configVersion = strconv.FormatUint(r.ConfigVersion, 10)
	}
	resources := ""
	if len(r.Resources) > 0 {
		b, err := json.Marshal(r.Resources)
		if err != nil {
			return fmt.Errorf("audit row: %w", err)
		}
		resources = string(b)
	}
	runSandbox, err := jsonCell(r.RunSandbox)
	if err != nil {
		return fmt.Errorf("audit row: %w", err)
	}
	sandbox, err := jsonCell(r.Sandbox)
	if err != nil {
		return fmt.Errorf("audit row: %w", err)
	}
	rec := []string{r.Time.UTC().Format(time.RFC3339Nano), r.Run, r.Project, strconv.Itoa(r.Step), r.Call, r.Tool, r.Action,
		resources, r.Verdict, r.Rule, r.Source, r.Grant, r.Ticket, r.Principal, r.Reply, r.How, r.By,
		strconv.FormatInt(r.DurationMs, 10), open, string(r.OriginalArgs), string(r.EditedArgs), configVersion,
		runSandbox, sandbox}
	if err := w.csv.Write(rec); err != nil {
		return fmt.Errorf("audit row: %w", err)
	}
	return nil
}

// Flush writes what is buffered (CSV) and reports a write error.
func (w *AuditWriter) Flush() error {
	if w.csv == nil {
		return nil
	}
	w.csv.Flush()
	if err := w.csv.Error(); err != nil {
		return fmt.Errorf("audit csv: %w", err)
	}
	return nil
}

// jsonCell is v as JSON, "" for a nil pointer.
func jsonCell[T any](v *T) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}
