package hosting

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/step"
)

// fleetConfig is a host's copy of the fleet's user configuration (see
// config.FleetDoc and docs/guide/fleet-policy.md): the last good document of the
// cluster's configuration bucket, kept current by a watch, so every run
// started and every approved call resumed reads the fleet's rules of the
// moment, without a restart.
//
// What the host uses:
//   - a document in the bucket: the document, whatever the host's own user
//     file says (a WARN at start names both digests when they differ);
//   - no document yet: the host's own user file, as without --nats, and a
//     WARN says that `engine config push` makes a file the fleet's; the
//     first document pushed applies from then on;
//   - a document that cannot be used (it does not decode, its digest is
//     wrong, its content is not a valid user file): the last good one (the
//     local file if there was none), and an ERROR names the version and why;
//   - the key deleted: the last good one, and a WARN.
//
// Rules, MCP servers, trusted projects and secrets_file follow the document
// as it changes; serve reads the operators and webhooks from it once, when
// the host starts. Safe for concurrent use.
type fleetConfig struct {
	base config.Loader // the host's loader, without a document
	cur  atomic.Pointer[config.FleetDoc]
	seen atomic.Uint64 // the last revision applied or refused
	log  *slog.Logger
}

// newFleetConfig is a host's copy of the fleet's document, not started:
// until start it is base, the host's own loader.
func newFleetConfig(base config.Loader, log *slog.Logger) *fleetConfig {
	return &fleetConfig{base: base, log: log}
}

// start reads the fleet's document of stream once (so the host's first run
// already has it) and follows its changes until ctx is done. The bucket is
// made with replicas replicas if it does not exist. Calling it again (a
// host that did not start and tries again) reads and follows anew.
func (fc *fleetConfig) start(ctx context.Context, js jetstream.JetStream, stream string, replicas int) error {
	b, err := step.OpenConfig(ctx, js, stream, replicas)
	if err != nil {
		return err
	}
	e, ok, err := b.Get(ctx)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		fc.log.Warn("the fleet has no configuration document: this host uses its own user file; `engine config push FILE --nats URL` makes a file the fleet's",
			"bucket", b.Bucket(), "file", fc.base.UserFile)
	default:
		fc.apply(e)
		if d := fc.cur.Load(); d != nil {
			fc.compareLocal(d)
		}
	}
	updates, err := b.Watch(ctx)
	if err != nil {
		return err
	}
	go func() {
		for e := range updates {
			fc.apply(e)
		}
	}()
	return nil
}

// apply takes e as the current document if it is usable.
func (fc *fleetConfig) apply(e step.ConfigEntry) {
	if e.Revision <= fc.seen.Load() {
		return // the watch's first value, read already
	}
	fc.seen.Store(e.Revision)
	last := fc.cur.Load()
	if e.Deleted {
		fc.log.Warn("the fleet's configuration document was deleted: this host keeps the last one it had", "version", versionOf(last))
		return
	}
	d, err := config.DecodeFleetDoc(e.Value, e.Revision)
	if err != nil {
		fc.log.Error("the fleet's configuration document cannot be used: this host keeps the last good one",
			"version", e.Revision, "kept", versionOf(last), "err", err)
		return
	}
	fc.cur.Store(d)
	fc.log.Info("fleet configuration applied", "version", d.Version, "sha256", d.Digest, "pushed_by", d.PushedBy, "pushed_at", d.PushedAt)
}

// compareLocal warns when the host's own user file is not the fleet's.
func (fc *fleetConfig) compareLocal(d *config.FleetDoc) {
	local := "none"
	if fc.base.UserFile != "" {
		data, err := config.ReadFile(fc.base.UserFile)
		switch {
		case err == nil:
			local = config.Digest(data)
		case !errors.Is(err, fs.ErrNotExist):
			local = "unreadable: " + err.Error()
		}
	}
	if local != d.Digest {
		fc.log.Warn("this host's user file is not the fleet's configuration: the fleet's applies",
			"file", fc.base.UserFile, "file_sha256", local, "fleet_version", d.Version, "fleet_sha256", d.Digest)
	}
}

// versionOf is d's version; 0 for none (the local file).
func versionOf(d *config.FleetDoc) uint64 {
	if d == nil {
		return 0
	}
	return d.Version
}

// loader is the host's loader with the current document, if any.
func (fc *fleetConfig) loader() config.Loader {
	l := fc.base
	l.Fleet = fc.cur.Load()
	return l
}

// policy is commands.Config.Policy reading the current document: the
// version it came from is the policy's (a run pins it).
func (fc *fleetConfig) policy(agent, location string) commands.Policy {
	l := fc.loader()
	p := commands.LoaderPolicy(l, fc.log)(agent, location)
	p.Version = versionOf(l.Fleet)
	return p
}
