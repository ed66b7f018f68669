package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/step"
)

// errFleetNeedsNATS is config push or show without --nats: on one machine
// the user file is the configuration, and there is no fleet's.
func errFleetNeedsNATS() error {
	return usageError{"the fleet's configuration lives in a NATS cluster: give --nats URL (without --nats the user file " + config.UserFile() + " is the configuration)"}
}

// runConfigPush is `engine config push FILE --nats URL`: validate FILE as
// every host reads a user file, refuse it whole on any error (the first,
// with file:line and key; nothing is pushed), else store it as the fleet's
// configuration document, which every host applies from its next run on.
func runConfigPush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config push", stderr)
	var cf connFlags
	cf.register(fs)
	stream := fs.String("stream", step.DefaultStream, "the stream's name (the bucket is STREAM"+step.ConfigBucketSuffix+")")
	replicas := fs.Int("replicas", 0, "the bucket's replicas when this push makes it (0: the stream's, or 1 when no host has made the stream yet)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine config push: takes one argument, the user file to push"}
	}
	path := fs.Arg(0)
	data, err := config.ReadFile(path)
	if err != nil {
		return err
	}
	doc, err := config.NewFleetDoc(path, data, pusher(&cf), time.Now())
	if err != nil {
		return err // refused whole: nothing is pushed
	}
	if cf.natsURL == "" {
		return errFleetNeedsNATS()
	}
	value, err := doc.Encode()
	if err != nil {
		return err
	}
	return cf.withConfigBucket(ctx, *stream, *replicas, func(b *step.ConfigBucket) error {
		rev, err := b.Put(ctx, value)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pushed %s as the fleet's configuration version %d (sha256 %s); hosts apply it from their next run\n", path, rev, doc.Digest)
		return nil
	})
}

// runConfigShow is `engine config show --nats URL [--json]`: the fleet's
// current document, its version, digest, who pushed it and when, and its
// content.
func runConfigShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("config show", stderr)
	var cf connFlags
	cf.register(fs)
	stream := fs.String("stream", step.DefaultStream, "the stream's name (the bucket is STREAM"+step.ConfigBucketSuffix+")")
	asJSON := fs.Bool("json", false, "print JSON (content as text)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine config show: takes no arguments"}
	}
	if cf.natsURL == "" {
		return errFleetNeedsNATS()
	}
	doc, err := cf.fleetDoc(ctx, *stream)
	if err != nil {
		return err
	}
	if doc == nil {
		return fmt.Errorf("the fleet has no configuration document yet (engine config push FILE%s): every host uses its own user file", cf.hint())
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Version  uint64    `json:"version"`
			Digest   string    `json:"sha256"`
			PushedBy string    `json:"pushed_by"`
			PushedAt time.Time `json:"pushed_at"`
			Content  string    `json:"content"`
		}{doc.Version, doc.Digest, doc.PushedBy, doc.PushedAt, string(doc.Content)})
	}
	fmt.Fprintf(stdout, "version %d\nsha256 %s\npushed by %s at %s\n---\n", doc.Version, doc.Digest, doc.PushedBy, doc.PushedAt.Format(time.RFC3339))
	_, err = stdout.Write(doc.Content)
	return err
}

// fleetDoc is the fleet's current document; nil when there is none. A
// document that cannot be used is an error saying why.
func (f *connFlags) fleetDoc(ctx context.Context, stream string) (doc *config.FleetDoc, err error) {
	err = f.withConfigBucket(ctx, stream, 0, func(b *step.ConfigBucket) error {
		e, ok, err := b.Get(ctx)
		if err != nil || !ok {
			return err
		}
		doc, err = config.DecodeFleetDoc(e.Value, e.Revision)
		return err
	})
	return doc, err
}

// withConfigBucket connects to --nats and calls fn with the stream's
// configuration bucket (made with replicas replicas if it does not exist;
// see step.OpenConfig).
func (f *connFlags) withConfigBucket(ctx context.Context, stream string, replicas int, fn func(*step.ConfigBucket) error) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	// A request the user's role may not make is refused by the server at
	// once, asynchronously; its JetStream request would otherwise wait for
	// an answer until the deadline.
	ctx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	opts = append(opts, nats.MaxReconnects(10), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			refuse(fmt.Errorf("%s: the NATS server refused it (%v): the fleet's configuration is a JetStream bucket, pushed and read with the engine's NATS credentials (in deploy/access, $KV.> is the engine role's only): %w",
				sgclient.CodePermissionDenied, err, sgclient.ErrPermissionDenied))
		}
	}))
	nc, err := nats.Connect(f.natsURL, opts...)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", f.natsURL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	b, err := step.OpenConfig(ctx, js, stream, replicas)
	if err == nil {
		err = fn(b)
	}
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, sgclient.ErrPermissionDenied) {
		return cause
	}
	return err
}

// pusher names who pushes: the NATS user when one is given, and the local
// user at this machine.
func pusher(f *connFlags) string {
	who := "unknown"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		who += "@" + h
	}
	if f.user != "" {
		who += " (nats user " + f.user + ")"
	}
	return who
}
