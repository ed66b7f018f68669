package main

import (
	"testing"

	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/step/steptest"
)

// The version a host announces as the NATS service's is one the service
// framework takes, for every module version the go command stamps: a
// release tag (go install …@v1.2.3), a pseudo-version of a checkout, with
// +dirty, and none. With the module's "v" kept, micro.AddService refused
// v1.2.3 and a binary installed with go install could not serve.
func TestServiceVersionIsSemVer(t *testing.T) {
	s := steptest.Start(t, "")
	for _, tt := range []struct{ why, module, want string }{
		{"a release tag", "v1.2.3", "1.2.3"},
		{"a pre-release tag", "v1.3.0-rc.1", "1.3.0-rc.1"},
		{"a checkout without a tag", "v0.0.0-20261202033500-610c64c1a2b3", "0.0.0-20261202033500-610c64c1a2b3"},
		{"a checkout after a tag, with changes", "v1.2.4-0.20261202033500-610c64c1a2b3+dirty", "1.2.4-0.20261202033500-610c64c1a2b3+dirty"},
		{"a build without version control", "(devel)", "0.0.0-dev"},
		{"no build information", "", "0.0.0-dev"},
	} {
		got := serviceVersion(tt.module)
		if got != tt.want {
			t.Errorf("%s: serviceVersion(%q) = %q, want %q", tt.why, tt.module, got, tt.want)
		}
		svc, err := micro.AddService(s.Conn, micro.Config{Name: "stepgate_version_check", Version: got})
		if err != nil {
			t.Errorf("%s: the service framework refuses %q: %v", tt.why, got, err)
			continue
		}
		_ = svc.Stop()
	}
}
