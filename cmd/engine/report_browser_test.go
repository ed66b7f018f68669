package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromiumInstall is what a machine without a browser is told to run.
const chromiumInstall = "sudo apt-get install -y chromium (or run scripts/test, which installs it)"

// browser is one headless Chromium with networking disabled: every host
// name resolves to nothing, every request goes to a proxy on a dead port,
// and the tab emulates being offline. Requests records every request
// the page sent (a self-contained page sends one: its own file).
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	requests []string
}

// newBrowser starts Chromium for t, bounded to a minute, offline (every
// host name resolves to nothing, every request goes to a dead proxy but
// loopback's, and the network state is offline), and stops it when t ends.
// A machine without chromium fails the test, naming the install command.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	b := launchBrowser(t, "the HTML report", time.Minute, 900,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
	)
	ctx := b.ctx
	if _, err := chromedp.Call(ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		t.Fatalf("Network.overrideNetworkState: %v", err)
	}
	if err := emulateOffline(ctx); err != nil {
		t.Fatalf("Network.emulateNetworkConditionsByRule: %v", err)
	}
	b.refuseOutside(t)
	return b
}

// launchBrowser starts a headless Chromium for t, bounded to timeout, with
// a window height and the flags of extra, records every request it sends,
// and stops it (checking that no process of it is left) when t ends. A
// machine without chromium fails the test, naming the install command;
// purpose says what the browser checks.
func launchBrowser(t *testing.T, purpose string, timeout time.Duration, height int, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Fatalf("%s is checked in a headless Chromium, and there is none on PATH: install it with %s", purpose, chromiumInstall)
	}
	profile := filepath.Join(t.TempDir(), "chromium-profile")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(profile),
		chromedp.NoSandbox, // CI runs as root in a container
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, height),
	)
	opts = append(opts, extra...)
	bounded, stopTimeout := context.WithTimeout(context.Background(), timeout)
	actx, stopAlloc := chromedp.NewExecAllocator(bounded, opts...)
	ctx, stopTab := chromedp.NewContext(actx)
	b := &browser{ctx: ctx}
	t.Cleanup(func() {
		stopTab()
		stopAlloc() // waits for the browser's process to exit
		stopTimeout()
		out, err := exec.Command("pgrep", "-f", profile).Output()
		var exit *exec.ExitError
		if err == nil {
			t.Errorf("chromium processes left behind after the test: %s", strings.TrimSpace(string(out)))
		} else if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("pgrep: %v", err)
		}
	})
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.requests = append(b.requests, e.Request.URL)
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start chromium (%s): %v; is it installed? %s", path, err, chromiumInstall)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("Network.enable: %v", err)
	}
	return b
}

// refuseOutside checks that an outside address does not load, then
// forgets the requests recorded so far.
func (b *browser) refuseOutside(t *testing.T) {
	t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate("http://stepgate.example/")); err == nil {
		t.Fatalf("chromium loaded http://stepgate.example/: networking is not disabled")
	} else {
		t.Logf("networking disabled: an outside address fails: %v", err)
	}
	b.mu.Lock()
	b.requests = nil
	b.mu.Unlock()
}

// emulateOfflineOld is Network.emulateNetworkConditionsByRule as
// Chromium before the protocol dropped its offline parameter takes it.
type emulateOfflineOld struct {
	Offline                  bool                  `json:"offline"`
	MatchedNetworkConditions []*network.Conditions `json:"matchedNetworkConditions"`
}

// emulateOffline makes every request of the tab fail as offline, in the
// protocol's current shape or, when the browser refuses it, the previous
// one.
func emulateOffline(ctx context.Context) error {
	all := []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: all})
	if err == nil {
		return nil
	}
	old := cdp.Command[emulateOfflineOld, network.EmulateNetworkConditionsByRuleResult]{Method: network.CommandEmulateNetworkConditionsByRule}
	if _, err2 := chromedp.Call(ctx, old, emulateOfflineOld{Offline: true, MatchedNetworkConditions: all}); err2 != nil {
		return fmt.Errorf("%w; in the previous shape: %w", err, err2)
	}
	return nil
}

// load opens the file in the tab and waits for its load event.
func (b *browser) load(t *testing.T, file string) {
	t.Helper()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.ctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("load %s: %v", abs, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// externalRequests are the requests the page sent beyond its own file.
func (b *browser) externalRequests(file string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, u := range b.requests {
		if !strings.HasPrefix(u, "file://") || !strings.HasSuffix(u, filepath.Base(file)) {
			out = append(out, u)
		}
	}
	return out
}

// screenshot writes the page, whole, to name in the artefacts directory
// ($STEPGATE_ARTIFACTS, else the test's temporary directory) and prints
// where: the whole page, or only the viewport (a page of thousands of
// steps is too tall for one image).
func (b *browser) screenshot(t *testing.T, name string, full bool) string {
	t.Helper()
	dir := os.Getenv("STEPGATE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(b.ctx, shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
	return path
}
