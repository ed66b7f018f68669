package hosting

import (
	"context"
	"errors"
	"net"
	"net/http"
	neturl "net/url"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/hosting/metricstest"
)

// A program embedding Stepgate serves a host as engine serve does: the
// stepgate service answers on the host's connection, the metrics endpoint
// counts what it drove, and Run returns nil once its context ends, having
// stopped every part and let the data directory go.
func TestServedRunsUntilItsContextEnds(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user file
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, ServeOptions{Options: Options{DataDir: dir, Version: "1.2.3"}, MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if s.HostName() == "" || s.ClientURL() != "" || s.WebURL() != "" {
		t.Fatalf("host %q, client URL %q, web URL %q; want the directory's identity and no listener nor web app", s.HostName(), s.ClientURL(), s.WebURL())
	}
	if _, err := LockData(dir); !errors.Is(err, ErrDataInUse) {
		t.Fatalf("the data directory of a served host: %v, want ErrDataInUse", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- s.Run(runCtx) }()
	c := sgclient.New(s.Conn())
	info, err := c.StartRun(ctx, sgclient.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatalf("start a run through the service: %v", err)
	}
	if _, err := c.EndRun(ctx, sgclient.EndRunRequest{Run: info.Run}); err != nil {
		t.Fatal(err)
	}
	fams := metricstest.Scrape(t, s.MetricsURL())
	if got := metricstest.Sample(fams, "stepgate_commits_total", "kind", "start"); got != 1 {
		t.Errorf("start commits = %v, want 1", got)
	}
	url := s.MetricsURL()
	stop()
	if err := <-ran; err != nil {
		t.Fatalf("Run after its context ended: %v, want nil", err)
	}
	if _, err := http.Get(url); err == nil {
		t.Error("metrics still served after Run returned")
	}
	release, err := LockData(dir)
	if err != nil {
		t.Fatalf("the data directory after Run: %v", err)
	}
	_ = release()
	if err := s.Close(); err != nil {
		t.Errorf("Close after Run: %v, want nil (nothing left)", err)
	}
}

// A served host that is never run lets go of everything on Close: its
// metrics listener, its service, its host and the data directory.
func TestServedClosedWithoutRun(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Start(ctx, ServeOptions{Options: Options{DataDir: dir, HostName: "h1", Listen: "127.0.0.1:0"}, MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if s.HostName() != "h1" || s.ClientURL() == "" {
		t.Fatalf("host %q, client URL %q; want h1 and a listener", s.HostName(), s.ClientURL())
	}
	u, err := neturl.Parse(s.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		t.Fatalf("the metrics address after Close: %v, want it free", err)
	}
	ln.Close()
	release, err := LockData(dir)
	if err != nil {
		t.Fatalf("the data directory after Close: %v", err)
	}
	_ = release()
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v, want nil", err)
	}
}
