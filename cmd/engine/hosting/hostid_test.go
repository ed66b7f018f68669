package hosting

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data directory's identity: the first start makes and stores it, a
// restart reads the same one back, --host wins for its start (stored only
// when there is none), and a corrupt file is refused, never replaced.
func TestHostIdentity(t *testing.T) {
	t.Run("first start stores, restart reads", func(t *testing.T) {
		dir := t.TempDir()
		first, note, err := hostIdentity(dir, "")
		if err != nil || note != "" {
			t.Fatalf("first start: %q %q %v", first, note, err)
		}
		if err := checkHostName(first); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, hostIDFile))
		if err != nil || !strings.Contains(string(b), first) {
			t.Fatalf("the identity file holds %q (%v), want %q in it", b, err, first)
		}
		again, _, err := hostIdentity(dir, "")
		if err != nil || again != first {
			t.Fatalf("restart: %q %v, want the stored %q", again, err, first)
		}
		other, _, err := hostIdentity(t.TempDir(), "")
		if err != nil || other == first {
			t.Fatalf("another directory's identity %q (%v) must differ from %q", other, err, first)
		}
	})
	t.Run("--host is stored when there is none", func(t *testing.T) {
		dir := t.TempDir()
		if got, _, err := hostIdentity(dir, "proc"); err != nil || got != "proc" {
			t.Fatalf("--host proc: %q %v", got, err)
		}
		if got, _, err := hostIdentity(dir, ""); err != nil || got != "proc" {
			t.Fatalf("restart without --host: %q %v, want proc", got, err)
		}
	})
	t.Run("--host wins over a stored one and does not replace it", func(t *testing.T) {
		dir := t.TempDir()
		stored, _, err := hostIdentity(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		got, note, err := hostIdentity(dir, "elsewhere")
		if err != nil || got != "elsewhere" || !strings.Contains(note, stored) {
			t.Fatalf("--host elsewhere: %q %q %v; want elsewhere and a note naming %s", got, note, err, stored)
		}
		if got, _, _ := hostIdentity(dir, ""); got != stored {
			t.Fatalf("after an override the directory's identity is %q, want %q", got, stored)
		}
	})
	t.Run("a corrupt file is refused", func(t *testing.T) {
		for _, content := range []string{"", "garbage", `{"v":1}`, `{"v":2,"host":"a"}`, `{"v":1,"host":"a b"}`,
			`{"v":1,"host":"a","more":1}`, `{"v":1,"host":"a"}{}`} {
			dir := t.TempDir()
			path := filepath.Join(dir, hostIDFile)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, _, err := hostIdentity(dir, "")
			if !errors.Is(err, ErrHostID) || !strings.Contains(err.Error(), path) {
				t.Errorf("file %q: %q %v; want an unusable-identity error naming the file", content, got, err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("file %q was rewritten to %q", content, b)
			}
			if got, note, err := hostIdentity(dir, "proc"); err != nil || got != "proc" || note == "" {
				t.Errorf("file %q with --host proc: %q %q %v; want proc and a note", content, got, note, err)
			}
		}
	})
	t.Run("a copied directory is warned about", func(t *testing.T) {
		dir := t.TempDir()
		stored, _, err := hostIdentity(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(t.TempDir(), "copy")
		if err := os.Mkdir(copied, 0o700); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, hostIDFile))
		if err == nil {
			err = os.WriteFile(filepath.Join(copied, hostIDFile), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, note, err := hostIdentity(copied, "")
		if err != nil || got != stored || !strings.Contains(note, "copy") {
			t.Fatalf("a copy: %q %q %v; want the stored %q and a note about copies", got, note, err, stored)
		}
		if _, note, _ := hostIdentity(dir, ""); note != "" {
			t.Errorf("the original directory: note %q, want none", note)
		}
	})
	t.Run("an unreadable file is refused", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, hostIDFile), 0o700); err != nil { // a directory: read fails
			t.Fatal(err)
		}
		if got, _, err := hostIdentity(dir, ""); err == nil {
			t.Fatalf("an unreadable identity: %q, want an error", got)
		}
	})
	t.Run("a bad --host is refused", func(t *testing.T) {
		if got, _, err := hostIdentity(t.TempDir(), "a b"); !errors.Is(err, ErrHostID) {
			t.Fatalf("--host 'a b': %q %v", got, err)
		}
	})
}

// One process per data directory: a second lock fails at once and says
// who holds it; released, the directory can be taken again.
func TestDataLock(t *testing.T) {
	dir := t.TempDir()
	release, err := LockData(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockData(dir); !errors.Is(err, ErrDataInUse) || !strings.Contains(err.Error(), "process ") {
		t.Fatalf("a second lock: %v, want ErrDataInUse naming the holder", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = LockData(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	_ = release()
}

// FuzzDecodeHostID: decoding never panics, and what it accepts is a valid
// name that stores and reads back as itself.
func FuzzDecodeHostID(f *testing.F) {
	for _, s := range []string{`{"v":1,"host":"vm-2cac542e"}`, `{"v":1,"host":""}`, `garbage`, `{"v":1,"host":"a"}{}`, "{\"v\":1,\"host\":\"\\u00e9\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := decodeHostID(b)
		if err != nil {
			return
		}
		name := id.Host
		if err := checkHostName(name); err != nil {
			t.Fatalf("accepted %q: %v", name, err)
		}
		dir := t.TempDir()
		got, err := storeHostID(dir, name)
		if err != nil || got != name {
			t.Fatalf("store %q: %q %v", name, got, err)
		}
	})
}
