package hosting

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step"
)

// Embedded is an engine host on an embedded NATS server, in this process.
// Its fields are set by StartEmbedded and read-only after; Close stops it.
type Embedded struct {
	// Server is the embedded NATS server (its ClientURL is "" without a
	// listener).
	Server *step.Embedded
	// Conn is the host's in-process connection to Server.
	Conn *nats.Conn
	// Host is the engine host.
	Host *commands.Host
	// HostName is the name the host commits under (Options.HostName, or
	// the data directory's identity).
	HostName string

	release func() error // the data directory's lock
}

// StartEmbedded starts a server with its storage in o.DataDir/nats and a
// host with its state in o.DataDir/state, holding the data directory's lock
// (ErrDataInUse when another process has it) until Close.
func StartEmbedded(ctx context.Context, o Options) (*Embedded, error) {
	release, err := claim(&o)
	if err != nil {
		return nil, err
	}
	srv, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: filepath.Join(o.DataDir, "nats"), Listen: o.Listen, Sync: o.Sync, AuthFile: o.AuthFile})
	if err != nil {
		return nil, errors.Join(err, release())
	}
	e := &Embedded{Server: srv, release: release, HostName: o.HostName}
	if e.Conn, err = srv.Connect(o.ClientOptions...); err != nil {
		e.Close()
		return nil, err
	}
	if e.Host, err = StartHost(ctx, e.Conn, o); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close stops the host, its connection and the server, and lets the data
// directory go.
func (e *Embedded) Close() error {
	var err error
	if e.Host != nil {
		err = e.Host.Close()
	}
	if e.Conn != nil {
		e.Conn.Close()
	}
	e.Server.Shutdown()
	return errors.Join(err, e.release())
}

// claim takes o's data directory for this process (its lock) and settles
// the name the host commits under (o.HostName: the directory's identity
// unless set). release lets the directory go.
func claim(o *Options) (release func() error, err error) {
	if release, err = LockData(o.DataDir); err != nil {
		return nil, err
	}
	if o.HostName != "" && !o.OverrideIdentity {
		return release, nil // a name of the program's own (demo, verify): not the directory's
	}
	name, note, err := hostIdentity(o.DataDir, o.HostName)
	if err != nil {
		return nil, errors.Join(err, release())
	}
	if note != "" {
		o.logger().Warn(note)
	}
	o.HostName = name
	return release, nil
}
