package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/gate"
)

// The user's file declares operators by the SHA-256 of their tokens; a
// token matches its operator only, and a project file may not declare any.
func TestOperatorsFromTheUsersFile(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "config.yaml")
	text := OperatorLine("ops-2", "token-two") + "\n"
	text = strings.Replace(text, "}}", "}, ops-1: {token_sha256: \""+hashHex("token-one")+"\"}}", 1)
	if err := os.WriteFile(user, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ops, err := Loader{UserFile: user}.Operators()
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Name != "ops-1" || ops[1].Name != "ops-2" {
		t.Fatalf("operators = %+v", ops)
	}
	for token, want := range map[string]string{"token-one": "ops-1", "token-two": "ops-2"} {
		if op, ok := ops.Match(token); !ok || op.Name != want {
			t.Errorf("Match(%q) = %v %v, want %s", token, op.Name, ok, want)
		}
	}
	for _, bad := range []string{"", "token-thr", hashHex("token-one")} {
		if op, ok := ops.Match(bad); ok {
			t.Errorf("Match(%q) = %s, want none", bad, op.Name)
		}
	}
	if _, err := Parse("p.yaml", []byte(text), gate.SourceProject); err == nil || !strings.Contains(err.Error(), "only the user's file may declare operators") {
		t.Errorf("a project file's operators: %v", err)
	}
	for in, want := range map[string]string{
		"operators: {ops-1: {token_sha256: abc}}": "want 64 hex digits",
		"operators: {ops-1: {}}":                  "want token_sha256",
		"operators: {ops-1: {token: x}}":          "unknown key (want token_sha256)",
		"operators: {'1x': {token_sha256: x}}":    "operator name",
		"operators: [ops-1]":                      "want a mapping",
	} {
		if _, err := Parse("u.yaml", []byte(in), gate.SourceUser); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want %q", in, err, want)
		}
	}
}

func hashHex(token string) string {
	line := OperatorLine("x", token)
	return line[strings.Index(line, "\"")+1 : strings.LastIndex(line, "\"")]
}

// FuzzOperators never panics on an operators section and accepts only
// 64 hex digits as a hash.
func FuzzOperators(f *testing.F) {
	f.Add("operators: {ops-1: {token_sha256: \"" + strings.Repeat("ab", 32) + "\"}}")
	f.Add("operators: {ops-1: {token_sha256: 12}}")
	f.Add("operators: {ops-1: null}")
	f.Fuzz(func(t *testing.T, in string) {
		file, err := Parse("u.yaml", []byte(in), gate.SourceUser)
		if err != nil {
			return
		}
		for _, op := range file.operators {
			if op.Name == "" {
				t.Fatalf("an operator without a name from %q", in)
			}
		}
	})
}
