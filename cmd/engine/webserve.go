package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	neturl "net/url"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/cmd/engine/render"
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

// checkPublicURL checks serve --public-url: an absolute http or https URL
// with a host ("" for none).
func checkPublicURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := neturl.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--public-url %q: want the inbox's external base URL, http:// or https:// with a host (no credentials, query or fragment)", s)
	}
	return nil
}

// operators are the web app's operators the user layer of l names, checked
// against the flags (with --nats, the fleet's document as the host started
// is checked as serve checks the local file's before it starts).
func (f *webFlags) operators(l config.Loader) (config.Operators, error) {
	ops, err := l.Operators()
	if err != nil {
		return nil, err
	}
	if err := f.check(ops); err != nil {
		return nil, err
	}
	return ops, nil
}

// options are the web app's hosting options; operators are the app's
// operators, read from the user layer the host started with.
func (f *webFlags) options(operators func(config.Loader) (config.Operators, error)) *hosting.WebOptions {
	if f.addr == "" {
		return nil
	}
	return &hosting.WebOptions{Addr: f.addr, CertFile: f.cert, KeyFile: f.key, Operators: operators, RunPage: webRunPage}
}

// webRunPage is the web app's run page: the run report's HTML.
func webRunPage(ctx context.Context, out io.Writer, api sgclient.API, run string) error {
	d, err := showRun(ctx, api, run)
	if err != nil {
		return err
	}
	return render.Report(out, d)
}
