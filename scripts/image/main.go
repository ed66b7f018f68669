// Command image builds Stepgate's OCI image from a static linux engine
// binary, without a container daemon (see internal/imagebuild):
//
//	go run ./scripts/image --binary dist/engine-linux-amd64 --layout dist/image-linux-amd64
//	go run ./scripts/image --binary dist/engine-linux-amd64 --tar dist/engine-linux-amd64.tar
//	docker load -i dist/engine-linux-amd64.tar
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/stepgate/stepgate/internal/imagebuild"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "image:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	binary := fs.String("binary", "", "the static linux engine binary (CGO_ENABLED=0), e.g. dist/engine-linux-amd64")
	layoutDir := fs.String("layout", "", "write an OCI image layout into this directory (new or empty)")
	tarPath := fs.String("tar", "", "write a tarball docker load and podman load take")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binary == "" || (*layoutDir == "" && *tarPath == "") {
		fs.Usage()
		return errors.New("give --binary and at least one of --layout and --tar")
	}
	img, stamp, err := imagebuild.Build(*binary)
	if err != nil {
		return err
	}
	tag := imagebuild.Tag(stamp)
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if *layoutDir != "" {
		if err := imagebuild.WriteLayout(*layoutDir, img, tag); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "OCI layout %s: %s:%s (%s/%s) %s\n", *layoutDir, imagebuild.Repository, tag, stamp.OS, stamp.Arch, digest)
	}
	if *tarPath != "" {
		if err := imagebuild.WriteTarball(*tarPath, img, tag); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "tarball %s: %s:%s (%s/%s) %s\n", *tarPath, imagebuild.Repository, tag, stamp.OS, stamp.Arch, digest)
	}
	return nil
}
