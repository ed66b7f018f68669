package hosting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsShutdown bounds how long stopping waits for scrapes in flight.
const metricsShutdown = 2 * time.Second

// metricsServer serves one registry's /metrics on a listener of its own.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// listenMetrics binds addr and prepares /metrics for reg (the Go runtime's
// and the process's metrics are added to it). Nothing is served until run.
func listenMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (*metricsServer, error) {
	if err := errors.Join(reg.Register(collectors.NewGoCollector()),
		reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             2 * lagTimeout,
	}))
	return &metricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}}, nil
}

// URL is where the metrics are served.
func (s *metricsServer) URL() string { return "http://" + s.ln.Addr().String() + "/metrics" }

// run serves until stop; an actor of serve's group.
func (s *metricsServer) run() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// stop lets the scrapes in flight finish (for metricsShutdown at most) and
// closes the listener; run then returns.
func (s *metricsServer) stop(error) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsShutdown)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
}

// close lets go of a server that was never run: its listener.
func (s *metricsServer) close() { _ = s.ln.Close() }
