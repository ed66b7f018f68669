package executor_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// A request names paths (Root set to the location's real path) when each of
// its relative resources is a path the call resolved inside the location,
// whichever tool built it; other requests are left as the tool made them,
// and a tool's shared request list is not written into.
func TestRequestsNamingPathsCarryTheRoot(t *testing.T) {
	base := t.TempDir()
	real, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	loc, ext := filepath.Join(real, "ws"), filepath.Join(real, "ext")
	for _, d := range []string{filepath.Join(loc, "src"), ext} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(real, "link")
	if err := os.Symlink(loc, link); err != nil {
		t.Fatal(err)
	}
	root := filepath.ToSlash(loc)
	shared := []descriptor.Request{{Action: "fixed", Resources: []string{"src/a.go"}}}
	type in struct {
		Paths []string `json:"paths"`
		Other string   `json:"other"`
	}
	tool, err := executor.New("paths_fx", "d", func(context.Context, executor.Call, in) (string, error) { return "", nil },
		executor.WithRequests(func(c executor.Call, in in) ([]descriptor.Request, error) {
			if in.Other == "shared" {
				_, err := c.Resolve("src/a.go", false)
				return shared, err
			}
			var reqs []descriptor.Request
			var files []string
			for _, p := range in.Paths {
				r, err := c.Resolve(p, false)
				if err != nil {
					return nil, err
				}
				reqs = append(reqs, r.Requests()...)
				files = append(files, r.Resource())
			}
			reqs = append(reqs, descriptor.Request{Action: "edit", Resources: files})
			if in.Other != "" {
				reqs = append(reqs, descriptor.Request{Action: "bash", Resources: []string{in.Other}})
			}
			return reqs, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	extDir := filepath.ToSlash(ext) + "/*"
	tests := []struct {
		why      string
		location string
		in       in
		want     []descriptor.Request
	}{
		{"a path inside", loc, in{Paths: []string{"src/a.go"}},
			[]descriptor.Request{{Action: "edit", Resources: []string{"src/a.go"}, Root: root}}},
		{"the location itself", loc, in{Paths: []string{"."}},
			[]descriptor.Request{{Action: "edit", Resources: []string{"."}, Root: root}}},
		{"an absolute path inside", loc, in{Paths: []string{filepath.Join(loc, "src/a.go")}},
			[]descriptor.Request{{Action: "edit", Resources: []string{"src/a.go"}, Root: root}}},
		{"a location through a symlink: the real root", link, in{Paths: []string{"src/a.go"}},
			[]descriptor.Request{{Action: "edit", Resources: []string{"src/a.go"}, Root: root}}},
		{"inside and outside", loc, in{Paths: []string{"src/a.go", filepath.Join(ext, "b")}},
			[]descriptor.Request{
				{Action: "external_directory", Resources: []string{extDir}, Save: []string{extDir}},
				{Action: "edit", Resources: []string{"src/a.go", filepath.ToSlash(ext) + "/b"}, Root: root}}},
		{"outside only: one form, no root", loc, in{Paths: []string{filepath.Join(ext, "b")}},
			[]descriptor.Request{
				{Action: "external_directory", Resources: []string{extDir}, Save: []string{extDir}},
				{Action: "edit", Resources: []string{filepath.ToSlash(ext) + "/b"}}}},
		{"a resource that is no resolved path: no root", loc, in{Paths: []string{"src/a.go"}, Other: "ls src"},
			[]descriptor.Request{
				{Action: "edit", Resources: []string{"src/a.go"}, Root: root},
				{Action: "bash", Resources: []string{"ls src"}}}},
		{"a tool's shared list: a copy", loc, in{Paths: []string{}, Other: "shared"},
			[]descriptor.Request{{Action: "fixed", Resources: []string{"src/a.go"}, Root: root}}},
		{"nothing resolved: as the tool made it", loc, in{Paths: []string{}},
			[]descriptor.Request{{Action: "edit"}}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			args, _ := json.Marshal(tt.in)
			p, err := tool.Prepare(executor.Call{Location: tt.location}, args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
	if shared[0].Root != "" {
		t.Errorf("the tool's shared requests were written into: %+v", shared)
	}
}
