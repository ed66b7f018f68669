package step

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stepgate/stepgate/events"
)

// Defaults of the stream.
const (
	DefaultStream     = "STEPGATE"
	DefaultMaxMsgSize = 8 << 20
	// DefaultDuplicates is the server's shortest de-duplication window. The
	// log does not rely on the window: every commit carries a subject-sequence
	// expectation, and a retried commit is recognised where it was stored
	// (see Log.CommitTo), however long ago. A long window only costs: the
	// server keeps every message id of the window in memory and, at start,
	// reads back every message written within it.
	DefaultDuplicates = 100 * time.Millisecond
)

// StreamConfig says how the log's stream is set up. The zero value is usable:
// every empty field takes its default.
type StreamConfig struct {
	// Name of the stream; default STEPGATE.
	Name string `json:"name" yaml:"name"`
	// Replicas; default 1 (use 3 on a cluster).
	Replicas int `json:"replicas" yaml:"replicas"`
	// MaxMsgSize bounds one commit; default 8 MiB. The server's max payload
	// must be at least as large.
	MaxMsgSize int32 `json:"max_msg_size" yaml:"max_msg_size"`
	// Duplicates is the server's de-duplication window for publishers other
	// than the log; default and minimum 100 ms (see DefaultDuplicates).
	Duplicates time.Duration `json:"duplicates" yaml:"duplicates"`
}

// Validate reports a configuration that cannot work.
func (c StreamConfig) Validate() error {
	if c.Replicas < 0 || c.Replicas > 5 {
		return fmt.Errorf("stream replicas %d: must be between 1 and 5", c.Replicas)
	}
	if c.MaxMsgSize < 0 {
		return fmt.Errorf("stream max message size %d: must be positive", c.MaxMsgSize)
	}
	if c.Duplicates != 0 && c.Duplicates < DefaultDuplicates {
		return fmt.Errorf("stream duplicates window %s: must be at least %s", c.Duplicates, DefaultDuplicates)
	}
	return nil
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Name == "" {
		c.Name = DefaultStream
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.MaxMsgSize == 0 {
		c.MaxMsgSize = DefaultMaxMsgSize
	}
	if c.Duplicates == 0 {
		c.Duplicates = DefaultDuplicates
	}
	return c
}

// Log is the append-only log of commits on one JetStream stream. Safe for
// concurrent use.
type Log struct {
	js     jetstream.JetStream
	pub    *Publisher
	stream jetstream.Stream
	cfg    StreamConfig
	// replicas is the stream's replica count as Open found or made it.
	replicas int
	buffers  sync.Pool // *[]byte encode buffers for commits
	msgs     sync.Pool // *nats.Msg of answered commits (see message)
}

// Open creates the stream if it does not exist (or updates its settings) and
// returns the log on it. An existing stream keeps its replica count: cfg's
// Replicas applies only to a stream Open creates (see Log.Replicas), since
// changing the replicas of a live stream moves its data between nodes and
// is the operator's decision, not a side effect of a host's start.
func Open(ctx context.Context, js jetstream.JetStream, cfg StreamConfig) (*Log, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	sc := jetstream.StreamConfig{
		Name:        cfg.Name,
		Subjects:    []string{events.AllSubjects},
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		MaxMsgSize:  cfg.MaxMsgSize,
		Duplicates:  cfg.Duplicates,
		AllowDirect: true,
		Discard:     jetstream.DiscardNew,
	}
	if have, err := js.Stream(ctx, cfg.Name); err == nil {
		sc.Replicas = max(have.CachedInfo().Config.Replicas, 1)
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("look up stream %s: %w", cfg.Name, err)
	}
	s, err := createOrUpdate(ctx, js, sc)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return nil, fmt.Errorf("set up stream %s: %w", cfg.Name, err)
	}
	if s == nil {
		if s, err = js.Stream(ctx, cfg.Name); err != nil {
			return nil, fmt.Errorf("open stream %s: %w", cfg.Name, err)
		}
	}
	pub, err := NewPublisher(js.Conn())
	if err != nil {
		return nil, err
	}
	l := &Log{js: js, pub: pub, stream: s, cfg: cfg, replicas: max(s.CachedInfo().Config.Replicas, 1)}
	l.buffers.New = func() any { b := make([]byte, 0, 4096); return &b }
	return l, nil
}

// Name returns the stream's name.
func (l *Log) Name() string { return l.cfg.Name }

// Replicas returns the stream's replica count as Open found or made it, and
// the count the configuration asked for; they differ when the stream
// existed with another count, which Open kept.
func (l *Log) Replicas() (have, asked int) { return l.replicas, l.cfg.Replicas }

// MaxMsgSize returns the largest commit the log takes, encoded.
func (l *Log) MaxMsgSize() int { return int(l.cfg.MaxMsgSize) }

// LastSeq returns the stream's last sequence (0 when empty).
func (l *Log) LastSeq(ctx context.Context) (uint64, error) {
	info, err := l.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s info: %w", l.cfg.Name, err)
	}
	return info.State.LastSeq, nil
}

// setUpAttempt bounds one request of a stream's set-up: a cluster busy
// electing its meta leader can drop a request (seen under -race, where a
// set-up waited out a whole 2-minute deadline), and creating or updating
// the same configuration again is idempotent.
const setUpAttempt = 15 * time.Second

// createOrUpdate creates or updates the stream sc, asking again when one
// request gets no answer within setUpAttempt, until ctx ends.
func createOrUpdate(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) (jetstream.Stream, error) {
	for {
		actx, cancel := context.WithTimeout(ctx, setUpAttempt)
		s, err := js.CreateOrUpdateStream(actx, sc)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return s, err
		}
	}
}
