package render

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"time"
)

//go:embed report_tmpl.html
var reportTemplateText string

// reportScript is the page's only script: it opens a step's arguments
// and results. The page's Content-Security-Policy allows it by its hash
// and nothing else: no other script, no request of any kind.
//
//go:embed report.js
var reportScript string

// reportCSP is the page's Content-Security-Policy, computed when a page
// is first rendered.
var reportCSP = sync.OnceValue(func() string {
	sum := sha256.Sum256([]byte(reportScript))
	return "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; form-action 'none'; base-uri 'none'"
})

// reportTemplate is the page's template, parsed when a page is first
// rendered (not at every start of the binary). It is embedded: a parse
// error is a defect of the build, which the report's tests meet.
var reportTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"stamp":      func(t *time.Time) string { return stamp(*t) },
		"ms":         func(n *int64) string { return span(time.Duration(*n) * time.Millisecond) },
		"size":       size,
		"isize":      func(n int) string { return size(int64(n)) },
		"grantLine":  grantLine,
		"ticketLine": func(t *TicketView) string { return strings.TrimPrefix(ticketLine(t, Palette{}), ": ") },
		"replyClass": replyClass,
		"connClass":  connClass,
		"join":       func(s []string) string { return strings.Join(s, " ") },
		"checklist":  func(t *TodosView) string { return t.Items.Checklist() },
	}).Parse(reportTemplateText))
})

// Report writes d as the run's report: one self-contained HTML page (no
// external asset, one script allowed by its hash, a Content-Security-Policy
// that forbids loading anything) with the timeline, a per-step chart of
// the calls over time coloured by verdict, the tickets' waiting times and
// each call's arguments and result, collapsed. The page's template is
// parsed on the first call, not when the package loads.
func Report(w io.Writer, d *Show) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := reportTemplate().Execute(bw, buildReportPage(d)); err != nil {
		return fmt.Errorf("report: render: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
