package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/httpguard"
	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/cmd/engine/web"
	"github.com/stepgate/stepgate/config"
)

// webFlags are serve's flags of the operators' web app.
type webFlags struct {
	addr, cert, key, publicURL string
}

func (f *webFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "http", "", "serve the operators' web app (inbox, runs, grants, /api/) on ADDR, e.g. 127.0.0.1:8080 (\"\" for none); operators sign in with a token declared in the user's file (engine operator token NAME)")
	fs.StringVar(&f.cert, "http-tls-cert", "", "the web app's TLS certificate (PEM); with --http-tls-key, required for --http on an address other than loopback")
	fs.StringVar(&f.key, "http-tls-key", "", "the web app's TLS key (PEM)")
	fs.StringVar(&f.publicURL, "public-url", "", "the web app's external base URL (behind a proxy), e.g. https://stepgate.example: trusted as an origin, and the base of links to tickets (URL/tickets/ID, in webhooks' ticket_issued too; \"\" for no link)")
}

// Refusals of --http.
var (
	errWebTLSPair    = errors.New("engine serve: --http-tls-cert and --http-tls-key go together")
	errWebNoTLS      = errors.New("engine serve: --http on an address other than loopback needs --http-tls-cert and --http-tls-key: operators' tokens and sessions would cross the network in clear")
	errWebNoOperator = errors.New("engine serve: --http needs at least one operator in the user's file: run engine operator token NAME and paste the line it prints")
)

// check refuses a web app that would be open or in clear: TLS off loopback,
// and at least one operator always.
func (f *webFlags) check(ops config.Operators) error {
	if f.addr == "" {
		return nil
	}
	if (f.cert == "") != (f.key == "") {
		return errWebTLSPair
	}
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usageError{fmt.Sprintf("engine serve: --http %q: want HOST:PORT", f.addr)}
	}
	if !loopback(host) && f.cert == "" {
		return errWebNoTLS
	}
	if len(ops) == 0 {
		return errWebNoOperator
	}
	return nil
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// webApp is the running web app: its listener and its live feed.
type webApp struct {
	srv *http.Server
	ln  net.Listener
	app *web.Server
	tls bool
	log *slog.Logger
}

// startWeb listens on f.addr and builds the app on api and log.
func startWeb(f webFlags, api sgclient.API, log web.Follower, ops config.Operators, lg *slog.Logger) (*webApp, error) {
	secure := f.cert != ""
	app, err := web.New(web.Config{API: api, Log: log, Operators: ops, RunPage: webRunPage, Secure: secure, PublicURL: f.publicURL, Logger: lg})
	if err != nil {
		return nil, err
	}
	srv := httpguard.Server(app, httpguard.Default(), lg)
	if secure {
		cert, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return nil, fmt.Errorf("engine serve: --http-tls-cert/--http-tls-key: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", f.addr)
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

// webRunPage is the web app's run page: the run report's HTML.
func webRunPage(ctx context.Context, out io.Writer, api sgclient.API, run string) error {
	d, err := showRun(ctx, api, run)
	if err != nil {
		return err
	}
	return render.Report(out, d)
}
