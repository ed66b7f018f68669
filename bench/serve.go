package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
)

// serveProc is an `engine serve` child process on a data directory.
type serveProc struct {
	cmd    *exec.Cmd
	stderr *tailBuffer
	done   chan struct{} // closed when the process has been waited for
	err    error         // Wait's, once done is closed
}

// startServe starts `engine serve --data data --test-tools` (the workloads
// call echo, a test tool) with the extra flags (its NATS: `--listen ADDR` for
// an embedded server, `--nats URL`).
func startServe(bin, data string, flags ...string) (*serveProc, error) {
	cmd := exec.Command(bin, append([]string{"serve", "--data", data, "--test-tools"}, flags...)...)
	p := &serveProc{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start engine serve: %w", err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *serveProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop asks the process to stop (SIGTERM), and kills it if it has not
// after 10 s.
func (p *serveProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// exited reports why the process ended, if it has.
func (p *serveProc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("engine serve exited: %v\n%s", p.err, p.stderr)
	default:
		return nil
	}
}

// rssMB is the process's resident set (VmRSS of /proc/PID/status) in MB.
func (p *serveProc) rssMB() (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("bench: rss: %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				return 0, fmt.Errorf("bench: rss %q: %w", line, err)
			}
			return round(float64(kb) / 1024), nil
		}
	}
	return 0, errors.New("bench: rss: no VmRSS in /proc status")
}

// serviceError is an answer of the service with an error code.
type serviceError struct{ code, msg string }

func (e *serviceError) Error() string { return e.code + ": " + e.msg }

// call sends req to the service's endpoint ep and decodes the answer into
// resp.
func call(ctx context.Context, nc *nats.Conn, ep string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	m, err := nc.RequestWithContext(ctx, "stepgate."+ep, body)
	if err != nil {
		return fmt.Errorf("%s: %w", ep, err)
	}
	if code := m.Header.Get(micro.ErrorCodeHeader); code != "" {
		return fmt.Errorf("%s: %w", ep, &serviceError{code: code, msg: m.Header.Get(micro.ErrorHeader)})
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(m.Data, resp); err != nil {
		return fmt.Errorf("%s: decode %.200q: %w", ep, m.Data, err)
	}
	return nil
}

// servingPatience bounds a host's start in w6: a restart with many runs
// waiting took minutes before it was made cheap.
const servingPatience = 10 * time.Minute

// waitServing connects to url and sends probe until the service answers it
// (the host has started: checkpoint loaded, log caught up), polling every
// millisecond, for at most servingPatience.
func waitServing(ctx context.Context, p *serveProc, url string, probe func(*nats.Conn) error) (*nats.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, servingPatience)
	defer cancel()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var nc *nats.Conn
	for {
		var err error
		if nc == nil {
			nc, err = nats.Connect(url, nats.Name("stepgate-bench"), nats.Timeout(time.Second))
		}
		if nc != nil {
			if err = probe(nc); err == nil {
				return nc, nil
			}
		}
		if perr := p.exited(); perr != nil {
			return nil, perr
		}
		if se := (*serviceError)(nil); errors.As(err, &se) && se.code != commands.CodeUnavailable {
			nc.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			if nc != nil {
				nc.Close()
			}
			return nil, fmt.Errorf("bench: engine serve not serving: %w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// dirMB is the size of the files under dir in MB.
func dirMB(dir string) float64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return round(float64(n) / (1 << 20))
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
