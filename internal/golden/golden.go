// Package golden compares what a test prints with a checked-in file, for
// the tests of what the engine prints (engine show, config check).
package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check compares got with testdata/name, rewriting the file first when
// update is set (each test package's -update flag).
func Check(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from what the code prints (-want +got); if the change is meant, run the test with -update and check the new file in:\n%s", name, diff)
	}
}
