package imagebuild

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// buildStatic builds the engine as scripts/release does for this machine's
// architecture: linux, CGO_ENABLED=0, -trimpath.
func buildStatic(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Fatalf("the image's binary is a linux one; this test runs it, and needs a linux machine (this is %s)", runtime.GOOS)
	}
	bin := filepath.Join(t.TempDir(), "engine-linux-"+runtime.GOARCH)
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "github.com/stepgate/stepgate/cmd/engine")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the static engine: %v\n%s", err, out)
	}
	return bin
}

// fromLayout reads the one image of the OCI layout in dir back.
func fromLayout(t *testing.T, dir string) v1.Image {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	ii, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := ii.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("the layout holds %d manifests, want 1", len(im.Manifests))
	}
	img, err := ii.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// fileOf returns the body and header of the file name in img's layers (the
// last layer that has it).
func fileOf(t *testing.T, img v1.Image, name string) ([]byte, *tar.Header) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	var hdr *tar.Header
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/") == name {
				if body, err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
				hdr = h
			}
		}
		rc.Close()
	}
	if hdr == nil {
		t.Fatalf("the image holds no %s", name)
	}
	return body, hdr
}

// The image, built without a daemon from the static binary, holds that
// binary at /engine, runs it as a user that is not root with a /data
// volume, and names the binary's version and commit in its labels; the
// binary taken out of the image's layer (read back from the OCI layout)
// runs the demo: the confirmations, the engine's restart and the run's
// resume in the second process. The docker-load tarball holds the same
// image.
func TestImageBinaryRunsTheDemo(t *testing.T) {
	bin := buildStatic(t)
	img, stamp, err := Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	lay, tb := filepath.Join(out, "layout"), filepath.Join(out, "engine.tar")
	if err := WriteLayout(lay, img, Tag(stamp)); err != nil {
		t.Fatal(err)
	}
	if err := WriteTarball(tb, img, Tag(stamp)); err != nil {
		t.Fatal(err)
	}

	back := fromLayout(t, lay)
	cf, err := back.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if diff := cmp.Diff([]string{"/engine"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if u := cf.Config.User; u == "" || u == "0" || strings.HasPrefix(u, "0:") || u == "root" {
		t.Errorf("the image runs as %q, want a user that is not root", u)
	}
	if _, ok := cf.Config.Volumes["/data"]; !ok {
		t.Errorf("volumes %v, want /data", cf.Config.Volumes)
	}
	wantLabels := map[string]string{"org.opencontainers.image.version": stamp.Version, "org.opencontainers.image.revision": stamp.revision()}
	for k, v := range wantLabels {
		if got := cf.Config.Labels[k]; got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}
	_, data := fileOf(t, back, "data")
	if data.Uid != uid || data.Typeflag != tar.TypeDir {
		t.Errorf("/data: type %c, owner %d; want a directory of the image's user %d", data.Typeflag, data.Uid, uid)
	}

	fromTar, err := tarball.ImageFromPath(tb, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := back.ConfigName()
	if got, err := fromTar.ConfigName(); err != nil || got != want {
		t.Errorf("the tarball's image configuration %v (%v), want the layout's %v", got, err, want)
	}

	body, hdr := fileOf(t, back, "engine")
	orig, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, orig) || hdr.Mode&0o111 == 0 {
		t.Fatalf("/engine in the image: %d bytes, mode %o; want the static binary's %d bytes, executable", len(body), hdr.Mode, len(orig))
	}
	run := t.TempDir()
	extracted := filepath.Join(run, "engine")
	if err := os.WriteFile(extracted, body, 0o755); err != nil {
		t.Fatal(err)
	}
	demo := exec.Command(extracted, "demo")
	demo.Dir = run
	demo.Env = append(os.Environ(), "TMPDIR="+run, "XDG_CONFIG_HOME="+filepath.Join(run, ".config"))
	var stdout, stderr bytes.Buffer
	demo.Stdout, demo.Stderr = &stdout, &stderr
	if err := demo.Run(); err != nil {
		t.Fatalf("engine demo (the image's binary): %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	got := stdout.String()
	for _, want := range []string{
		"step 4 awaits a human",                       // the confirmation asked
		"the run waits for a human; the engine stops", // the restart
		"a new engine process starts on the same data",
		"projection loaded from its checkpoint", // the resume, in the second process
		"approved once by demo-operator",
		"rejected with feedback by demo-operator",
		"c8   edit       confirm Edited main.go: 1 replacement",
		`c10  grep       allow   main.go:4: const version = "1.0"`,
		"ended (completed)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the image binary's demo lacks %q:\n%s", want, got)
		}
	}
	ver, err := exec.Command(extracted, "version").Output()
	if err != nil || !strings.HasPrefix(string(ver), "engine ") {
		t.Errorf("engine version (the image's binary): %q %v", ver, err)
	}
}

// A binary that is not a static linux engine (here a file that is no
// binary at all) makes no image.
func TestImageRefusesANonBinary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "engine")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho engine\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Build(p); err == nil {
		t.Fatal("an image of a shell script")
	}
}

// A stamp that is not linux, or links the C library, is refused as not
// static; the tag has none of the characters a tag may not hold.
func TestStampCheckAndTag(t *testing.T) {
	for _, tt := range []struct {
		why string
		s   Stamp
		ok  bool
	}{
		{"static linux", Stamp{OS: "linux", Arch: "arm64"}, true},
		{"darwin", Stamp{OS: "darwin", Arch: "arm64"}, false},
		{"cgo", Stamp{OS: "linux", Arch: "amd64", CGO: true}, false},
	} {
		err := tt.s.check()
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrNotStatic)) {
			t.Errorf("%s: check = %v, want ok %v", tt.why, err, tt.ok)
		}
	}
	tags := []string{Tag(Stamp{Version: "(devel)"}), Tag(Stamp{Version: "v0.0.0-20261202033500-610c64c1a2b3+dirty"}), Tag(Stamp{Version: "v1.2.3"})}
	if diff := cmp.Diff([]string{"dev", "v0.0.0-20261202033500-610c64c1a2b3-dirty", "v1.2.3"}, tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if slices.ContainsFunc(tags, func(s string) bool { return strings.ContainsAny(s, "+()") }) {
		t.Errorf("a tag holds a character tags may not: %v", tags)
	}
}
