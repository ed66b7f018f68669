package hosting

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/httpguard"
	"github.com/stepgate/stepgate/cmd/engine/web"
	"github.com/stepgate/stepgate/config"
)

// WebOptions configure the operators' web app of a served host (inbox,
// runs, grants, /api/). The caller checks them first (an address off
// loopback needs TLS; an app needs an operator): Start serves what it is
// given.
type WebOptions struct {
	// Addr is the app's listener, HOST:PORT.
	Addr string
	// CertFile and KeyFile are the app's TLS certificate and key (PEM);
	// both "" for plain HTTP.
	CertFile, KeyFile string
	// Operators returns the operators who may sign in, from the user
	// layer the host started with (the local file, or with
	// ServeOptions.Dial the fleet's document as the host started). Required.
	Operators func(config.Loader) (config.Operators, error)
	// RunPage renders a run's page. Required.
	RunPage web.RunPage
}

// webApp is the running web app: its listener and its live feed.
type webApp struct {
	srv *http.Server
	ln  net.Listener
	app *web.Server
	tls bool
	log *slog.Logger
}

// startWeb listens on o.Addr and builds the app on api and log.
func startWeb(o WebOptions, publicURL string, api sgclient.API, log web.Follower, ops config.Operators, lg *slog.Logger) (*webApp, error) {
	secure := o.CertFile != ""
	app, err := web.New(web.Config{API: api, Log: log, Operators: ops, RunPage: o.RunPage, Secure: secure, PublicURL: publicURL, Logger: lg})
	if err != nil {
		return nil, err
	}
	srv := httpguard.Server(app, httpguard.Default(), lg)
	if secure {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("engine serve: --http-tls-cert/--http-tls-key: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("engine serve: --http: %w", err)
	}
	return &webApp{srv: srv, ln: httpguard.Listen(ln, httpguard.Default(), lg), app: app, tls: secure, log: lg}, nil
}

// URL is where the app listens.
func (w *webApp) URL() string {
	scheme := "http"
	if w.tls {
		scheme = "https"
	}
	return scheme + "://" + w.ln.Addr().String() + "/"
}

// run serves until stop; the live feed follows the log meanwhile.
func (w *webApp) run(ctx context.Context) error {
	feed := make(chan error, 1)
	go func() { feed <- w.app.Run(ctx) }()
	var err error
	if w.tls {
		err = w.srv.ServeTLS(w.ln, "", "")
	} else {
		err = w.srv.Serve(w.ln)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, <-feed)
}

// stop ends the app: the live streams first (they never end on their own),
// then the server, within five seconds.
func (w *webApp) stop(cancel context.CancelFunc) {
	cancel()
	ctx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if err := w.srv.Shutdown(ctx); err != nil {
		w.log.Warn("web app: stopping", "err", err)
		_ = w.srv.Close()
	}
}

// close lets go of an app that was never run: its listener.
func (w *webApp) close() { _ = w.ln.Close() }
