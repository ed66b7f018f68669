// Package imagebuild builds Stepgate's OCI image without a container
// daemon: one layer holding a static linux engine binary at /engine, run
// as a user that is not root, with a /data volume and labels naming the
// binary's version and commit (read from the binary's own build stamp). It
// writes an OCI image layout (skopeo, crane, podman's oci: transport) or a
// tarball that docker load and podman load take. scripts/image is its
// command; the engine binary does not import it.
package imagebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ErrNotStatic is a binary the image cannot run: not a static linux one.
var ErrNotStatic = errors.New("not a static linux engine binary")

// Repository is the image's name in a tarball (docker load tags it
// Repository:Tag(stamp)).
const Repository = "stepgate/engine"

// The image's paths.
const (
	BinaryPath = "/engine"
	DataDir    = "/data"
)

// Build builds the image of the engine binary at path. It reads the
// binary's build stamp for the labels, the platform and the creation time,
// and refuses one that is not a static linux build (ErrNotStatic).
func Build(path string) (v1.Image, Stamp, error) {
	s, err := ReadStamp(path)
	if err != nil {
		return nil, Stamp{}, err
	}
	if err := s.check(); err != nil {
		return nil, s, fmt.Errorf("%s: %w", path, err)
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, s, err
	}
	tarBytes, err := rootfs(bin, s.Time)
	if err != nil {
		return nil, s, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, s, fmt.Errorf("the image's layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, s, fmt.Errorf("the image: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, s, fmt.Errorf("the image's configuration: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = s.OS, s.Arch
	cf.Created = v1.Time{Time: s.Time}
	cf.Config = config(s)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, s, fmt.Errorf("the image's configuration: %w", err)
	}
	return img, s, nil
}

// config is the image's run configuration: the engine as entrypoint,
// serving on /data by default; the user's file is read from
// /etc/stepgate/config.yaml (XDG_CONFIG_HOME=/etc), as under the systemd
// unit.
func config(s Stamp) v1.Config {
	return v1.Config{
		Entrypoint: []string{BinaryPath},
		Cmd:        []string{"serve", "--data", DataDir},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: DataDir,
		Env:        []string{"HOME=" + DataDir, "XDG_CONFIG_HOME=/etc", "TMPDIR=/tmp"},
		Volumes:    map[string]struct{}{DataDir: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "Stepgate engine",
			"org.opencontainers.image.description": "Stepgate: permission-checked, durably logged tool execution for AI agents",
			"org.opencontainers.image.source":      "https://github.com/stepgate/stepgate",
			"org.opencontainers.image.version":     s.Version,
			"org.opencontainers.image.revision":    s.revision(),
		},
	}
}

// Tag is the image's tag for a stamp: its version, with what a tag may
// not hold ("+dirty", a "(devel)") replaced.
func Tag(s Stamp) string {
	v := s.Version
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	v = strings.NewReplacer("+", "-", "(", "", ")", "").Replace(v)
	if len(v) > 128 {
		v = v[:128]
	}
	return v
}

// WriteLayout writes img as an OCI image layout in dir (a new or empty
// directory), its manifest annotated with the tag as its reference name.
func WriteLayout(dir string, img v1.Image, tag string) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return nil
}

// WriteTarball writes img to path as a tarball docker load and podman load
// take, tagged Repository:tag.
func WriteTarball(path string, img v1.Image, tag string) error {
	ref, err := name.NewTag(Repository+":"+tag, name.WeakValidation)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	if err := tarball.WriteToFile(path, ref, img); err != nil {
		return fmt.Errorf("tarball %s: %w", path, err)
	}
	return nil
}
