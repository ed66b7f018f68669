package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The CLI reference is made from the verbs' own flag sets: a verb, flag or
// help text changed without `go generate ./cmd/engine` fails here, so the
// page a user reads is the binary they run.
func TestCLIReferenceIsFresh(t *testing.T) {
	pages := cliPages(context.Background())
	for name, page := range pages {
		want, err := os.ReadFile(filepath.Join("../../docs/reference", name))
		if err != nil {
			t.Errorf("docs/reference/%s: %v: run go generate ./cmd/engine", name, err)
			continue
		}
		if diff := cmp.Diff(string(want), page); diff != "" {
			t.Errorf("docs/reference/%s is stale: run go generate ./cmd/engine (-file +generated):\n%s", name, diff)
		}
	}
	written, _ := filepath.Glob("../../docs/reference/cli/*.md")
	for _, w := range written {
		if _, ok := pages["cli/"+filepath.Base(w)]; !ok {
			t.Errorf("%s is no group's page any more: remove it", w)
		}
	}
}

// Every verb and subcommand has a group, a usage line and an example, and
// every group has a verb.
func TestEveryVerbIsDocumented(t *testing.T) {
	docs := subDocs()
	for _, v := range verbs() {
		docs = append(docs, v.verbDoc)
	}
	used := map[string]bool{}
	for _, d := range docs {
		if d.group == "" || d.summary == "" || d.usage == "" || d.example == "" {
			t.Errorf("engine %s: group %q, summary %q, usage %q, example %q: want all four", d.name, d.group, d.summary, d.usage, d.example)
		}
		used[d.group] = true
	}
	for _, g := range groups() {
		if !used[g] {
			t.Errorf("group %q has no verb", g)
		}
	}
}
