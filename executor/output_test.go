package executor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor"
)

func newStore(t *testing.T, dir string) *executor.OutputStore {
	n := 0
	return executor.NewOutputStore(dir, func() time.Time { return time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC) },
		func() string { n++; return "ID" + string(rune('0'+n)) })
}

func lines(n int, prefix string) string {
	var b []string
	for i := 1; i <= n; i++ {
		b = append(b, prefix+string(rune('0'+i%10)))
	}
	return strings.Join(b, "\n")
}

func TestPreviewExactly(t *testing.T) {
	const path = "/out/tool_X"
	marker := executor.Marker(path)
	tests := []struct {
		why  string
		text string
		lim  executor.Limits
		want string
	}{
		{"over lines: the first ceil(L/2) and last floor(L/2) lines, L = max_lines − 4",
			"a\nb\nc\nd\ne\nf\ng\nh\ni\nj", executor.Limits{MaxLines: 9, MaxBytes: 10000},
			"a\nb\nc\n\n" + marker + "\n\ni\nj"},
		{"over bytes: a prefix and a suffix within half the byte budget each",
			"0123456789\nABCDEFGHIJ\nabcdefghij", executor.Limits{MaxLines: 8, MaxBytes: len(marker) + 4 + 10},
			"01234\n\n" + marker + "\n\nfghij"},
		{"multibyte text is cut at a code point, never inside one",
			"ééééé\nüüüüü", executor.Limits{MaxLines: 6, MaxBytes: len(marker) + 4 + 7},
			"éé\n\n" + marker + "\n\nü"}, // 4 bytes of head; the tail's 3 bytes hold one ü, not one and a half
		{"tiny limits: the marker alone", "x\ny\nz", executor.Limits{MaxLines: 2, MaxBytes: 1}, marker},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, executor.Preview(tt.text, path, tt.lim)); diff != "" {
				t.Errorf("preview (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBound(t *testing.T) {
	dir := t.TempDir()
	s := newStore(t, dir)
	small := executor.TextResult("fits")
	if got, sp := s.Bound(small, executor.Limits{}); sp != nil || !cmp.Equal(got, small) {
		t.Errorf("under the limits: %+v, %+v; want it unchanged", got, sp)
	}

	big := executor.Result{Parts: []executor.Part{{Type: executor.PartText, Text: lines(10, "line ")},
		{Type: executor.PartMedia, MIME: "image/png", Data: []byte{1, 2}}}}
	got, sp := s.Bound(big, executor.Limits{MaxLines: 6})
	if sp == nil {
		t.Fatal("over the limits and nothing spilled")
	}
	if sp.Path != filepath.Join(dir, "tool_ID1") || sp.Bytes != int64(len(big.Parts[0].Text)) ||
		!sp.Expires.Equal(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("spilled %+v", sp)
	}
	whole, err := os.ReadFile(sp.Path)
	if err != nil || string(whole) != big.Parts[0].Text {
		t.Errorf("the file holds %q, %v; want the whole text", whole, err)
	}
	want := []executor.Part{{Type: executor.PartText, Text: "line 1\n\n" + executor.Marker(sp.Path) + "\n\nline 0"},
		{Type: executor.PartMedia, MIME: "image/png", Data: []byte{1, 2}}}
	if diff := cmp.Diff(want, got.Parts); diff != "" {
		t.Errorf("bounded parts (-want +got):\n%s", diff)
	}
}

func TestBoundMeasuresStructuredOutputAsIndentedJSON(t *testing.T) {
	s := newStore(t, t.TempDir())
	v := map[string]any{"items": []int{1, 2, 3, 4, 5, 6, 7, 8}}
	raw, _ := json.Marshal(v)
	got, sp := s.Bound(executor.Result{Structured: raw}, executor.Limits{MaxLines: 5})
	if sp == nil {
		t.Fatal("indented JSON of 12 lines fits 5 lines?")
	}
	whole, _ := os.ReadFile(sp.Path)
	indented, _ := json.MarshalIndent(v, "", "  ")
	if string(whole) != string(indented) {
		t.Errorf("the file holds %q, want the indented JSON", whole)
	}
	// 12 lines over 5: L = 1, so the first line and no tail.
	want := []executor.Part{{Type: executor.PartText, Text: "{\n\n" + executor.Marker(sp.Path)}}
	if diff := cmp.Diff(want, got.Parts); diff != "" || got.Structured != nil {
		t.Errorf("bounded structured output (-want +got):\n%s (structured %s)", diff, got.Structured)
	}
}

func TestBoundFailsWhenTheFileCannotBeWritten(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, filepath.Join(notDir, "tool-output"))
	got, sp := s.Bound(executor.TextResult(lines(10, "x")), executor.Limits{MaxLines: 5})
	if sp != nil || !got.IsError || !strings.HasPrefix(got.Text(), "Failed to write tool output: ") {
		t.Errorf("bound with an unwritable directory = %+v, %+v; want the call to fail", got, sp)
	}
}
