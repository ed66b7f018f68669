package replay

import (
	"bytes"
	"testing"

	"github.com/stepgate/stepgate/events"
)

// FuzzAuditor feeds arbitrary messages of the log (one per line, each
// "subject data") through the auditor and both writers: whatever the log
// holds, the audit never panics, and every row it gives names its run.
func FuzzAuditor(f *testing.F) {
	f.Add([]byte(`sg.run.r1 {"id":"a","run":"r1","kind":"start","at":"2026-01-01T00:00:00Z","events":[{"type":"RunStarted","v":1,"data":{"project":"p"}}]}
sg.run.r1 {"id":"b","run":"r1","step":1,"kind":"step","at":"2026-01-01T00:00:01Z","events":[{"type":"ToolCallRequested","v":1,"data":{"call_id":"c","tool":"echo"}},{"type":"PermissionDecided","v":1,"data":{"call_id":"c","verdict":"allow","rule":{"action":"*","resource":"*","effect":"allow","source":"saved"}}},{"type":"ToolResultRecorded","v":1,"data":{"call_id":"c","parts":[]}}]}`))
	f.Fuzz(func(t *testing.T, log []byte) {
		a := NewAuditor(AuditFilter{})
		var out bytes.Buffer
		jw, _ := NewAuditWriter(&out, FormatJSONL)
		cw, _ := NewAuditWriter(&out, FormatCSV)
		check := func(rows []AuditRow) {
			for i := range rows {
				if rows[i].Run == "" {
					t.Fatalf("a row without a run: %+v", rows[i])
				}
				if err := jw.Write(&rows[i]); err != nil {
					t.Fatal(err)
				}
				if err := cw.Write(&rows[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		for line := range bytes.SplitSeq(log, []byte("\n")) {
			subject, data, _ := bytes.Cut(line, []byte(" "))
			c, err := events.Unmarshal(data)
			if err != nil {
				continue
			}
			rows, _ := a.Add(string(subject), c)
			check(rows)
		}
		check(a.Close())
	})
}
