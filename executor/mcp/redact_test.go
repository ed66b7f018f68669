package mcp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/executor"
)

const testSecret = "sg-secret-4f1c9a7e2b" // 20 bytes

// embed builds the texts a server might return holding secret: as is
// and in each encoding, alone and inside other text, base64 at each of
// the three alignments and in a longer encoded blob.
func embed(secret string) map[string]string {
	out := map[string]string{}
	for name, f := range forms(secret) {
		out[name+" alone"] = f
		out[name+" in text"] = "value=" + f + "; next"
	}
	for pre := range 3 {
		blob := strings.Repeat("k", pre) + "TOKEN=" + secret + "\nPATH=/usr/bin\n"
		out["base64 env, offset "+string(rune('0'+pre))] = "env: " + base64.StdEncoding.EncodeToString([]byte(blob)) + " end"
		out["base64url env, offset "+string(rune('0'+pre))] = base64.URLEncoding.EncodeToString([]byte(blob))
	}
	js, _ := json.Marshal(map[string]string{"TOKEN": secret, "HTML": "<" + secret + ">"})
	out["json object"] = string(js)
	return out
}

func TestRedactorRemovesEveryEncoding(t *testing.T) {
	r := NewRedactor([]string{testSecret})
	for name, text := range embed(testSecret) {
		got := r.Redact(text)
		if l := leaksStrict(got, testSecret); len(l) > 0 {
			t.Errorf("%s: %v remain in %q", name, l, got)
		}
		if !strings.Contains(got, "[redacted]") {
			t.Errorf("%s: nothing redacted in %q", name, got)
		}
	}
	for _, text := range []string{"", "ordinary text", "sg-secret-4f1c9a7e2", "c2ctc2VjcmV0", strings.Repeat("x", 5000)} {
		if got := r.Redact(text); got != text {
			t.Errorf("text without the secret changed: %q → %q", text, got)
		}
	}
}

func TestRedactorShortSecretsAndMarker(t *testing.T) {
	r := NewRedactor([]string{"abc", "", "abc"})
	if r.Short() != 1 || r.Redact("abc abc") != "abc abc" {
		t.Fatalf("a 3-byte secret: Short %d, redacted to %q", r.Short(), r.Redact("abc abc"))
	}
	// A secret holding the marker's brackets gets other brackets, so the
	// marker never completes it with the text around it.
	r = NewRedactor([]string{"x]y[redacted]z"})
	if got := r.Redact("x]y" + "x]y[redacted]z" + "z"); strings.Contains(got, "x]y[redacted]z") || !strings.Contains(got, "<redacted>") {
		t.Fatalf("marker %q: %q", r.marker, got)
	}
}

func TestRedactResultEveryPart(t *testing.T) {
	r := NewRedactor([]string{testSecret})
	res := r.RedactResult(executor.Result{
		Parts: []executor.Part{
			{Type: executor.PartText, Text: "TOKEN=" + testSecret},
			{Type: executor.PartMedia, MIME: "image/png", Data: []byte("PNG" + testSecret)},
		},
		Structured: json.RawMessage(`{"env":{"TOKEN":"` + testSecret + `"},"` + testSecret + `":1,"n":42,"esc":"\u0073g-secret-4f1c9a7e2b"}`),
	})
	b, _ := json.Marshal(res)
	if l := leaks(string(b), testSecret); len(l) > 0 {
		t.Fatalf("%v remain in %s", l, b)
	}
	var v map[string]any
	if err := json.Unmarshal(res.Structured, &v); err != nil || v["n"] != 42.0 {
		t.Fatalf("structured content %s: %v", res.Structured, err)
	}
	plain := json.RawMessage(`{"b": 1, "a": "x"}`)
	if got := r.RedactJSON(plain); string(got) != string(plain) {
		t.Fatalf("JSON without the secret changed: %s", got)
	}
}

func TestRedactToolsKeepsTheServersNames(t *testing.T) {
	r := NewRedactor([]string{testSecret})
	tools, remote := r.redactTools([]*sdk.Tool{{Name: "t_" + testSecret, Description: "uses " + testSecret,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "string", "default": testSecret}}}}})
	b, _ := json.Marshal(tools)
	if l := leaks(string(b), testSecret); len(l) > 0 {
		t.Fatalf("%v remain in %s", l, b)
	}
	if remote[tools[0].Name] != "t_"+testSecret {
		t.Fatalf("the server's name is lost: %v", remote)
	}
}

// BenchmarkRedactResult redacts a 1 MiB text result holding no secret,
// with three secrets configured: the cost every MCP result now pays.
func BenchmarkRedactResult(b *testing.B) {
	r := NewRedactor([]string{testSecret, "Bearer " + testSecret, "another-secret-value-0123"})
	text := strings.Repeat("ordinary output line, nothing secret in it 0123456789\n", 1<<20/54)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		res := r.RedactResult(executor.Result{Parts: []executor.Part{{Type: executor.PartText, Text: text}}})
		if res.Parts[0].Text != text {
			b.Fatal("changed")
		}
	}
}
