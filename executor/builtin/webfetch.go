package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// Webfetch limits.
const (
	WebfetchMaxBytes       = 5 << 20 // the largest body read
	WebfetchDefaultTimeout = 30 * time.Second
	WebfetchMaxTimeout     = 120 * time.Second
)

// WebfetchInput is the input of webfetch.
type WebfetchInput struct {
	URL     string `json:"url" jsonschema:"description=The http or https URL to fetch"`
	Format  string `json:"format,omitempty" jsonschema:"enum=markdown,enum=text,enum=html,description=How HTML is returned (default markdown)"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"description=Seconds to wait (default 30; at most 120),minimum=0"`
}

// Webfetch builds webfetch: it GETs an http(s) URL, reads at most 5 MiB, and
// returns text; HTML becomes Markdown or plain text unless html is asked
// for. Permission: webfetch on the URL.
func Webfetch() (*executor.Tool, error) {
	return executor.New("webfetch",
		"Fetch a web page or text document over http(s) and return its content; HTML is converted to Markdown (format markdown, the default), plain text (text) or returned as is (html). Bodies over 5 MiB and non-text content are refused; waits at most timeout seconds (default 30, at most 120).",
		fetch, executor.WithEffect(descriptor.ReadOnly), executor.Anywhere(),
		executor.WithRequests(func(_ executor.Call, in WebfetchInput) ([]descriptor.Request, error) {
			if _, err := fetchURL(in.URL); err != nil {
				return nil, err
			}
			return []descriptor.Request{{Action: "webfetch", Resources: []string{in.URL}, Save: []string{"*"}}}, nil
		}))
}

// fetchURL checks that raw is an absolute http or https URL with a host.
func fetchURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: only http and https are fetched", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	return u, nil
}

// redirectError stops a redirect to another host: the permission asked was
// for the URL the model named, not wherever it leads.
type redirectError struct{ to string }

func (e *redirectError) Error() string { return "redirect to another host: " + e.to }

// sameHost follows redirects within the URL's host only (at most 10).
func sameHost(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		return &redirectError{to: req.URL.String()}
	}
	return nil
}

func fetch(ctx context.Context, _ executor.Call, in WebfetchInput) (string, error) {
	u, err := fetchURL(in.URL)
	if err != nil {
		return "", err
	}
	timeout := WebfetchDefaultTimeout
	if in.Timeout > 0 {
		timeout = min(time.Duration(in.Timeout)*time.Second, WebfetchMaxTimeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "Stepgate-webfetch/1")
	req.Header.Set("Accept", "text/markdown;q=1.0, text/plain;q=0.9, text/html;q=0.8, */*;q=0.1")
	resp, err := (&http.Client{CheckRedirect: sameHost}).Do(req)
	if err != nil {
		if to, ok := errors.AsType[*redirectError](err); ok {
			return "", fmt.Errorf("fetch %s: it redirects to another host, %s; fetch that URL to follow it (it needs its own permission)", u, to.to)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("fetch %s: no answer within %s", u, timeout)
		}
		return "", fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("fetch %s: %s", u, resp.Status)
	}
	if resp.ContentLength > WebfetchMaxBytes {
		return "", fmt.Errorf("fetch %s: the body is %d bytes, over the 5 MiB limit", u, resp.ContentLength)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, WebfetchMaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("fetch %s: read the body: %w", u, err)
	}
	if len(body) > WebfetchMaxBytes {
		return "", fmt.Errorf("fetch %s: the body is over the 5 MiB limit", u)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == "" {
		mediaType = http.DetectContentType(body)
		mediaType, _, _ = mime.ParseMediaType(mediaType)
	}
	switch {
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		switch in.Format {
		case "html":
			return string(body), nil
		case "text":
			return htmlToText(bytes.NewReader(body), false), nil
		default:
			return htmlToText(bytes.NewReader(body), true), nil
		}
	case strings.HasPrefix(mediaType, "text/"), strings.HasSuffix(mediaType, "json"), strings.HasSuffix(mediaType, "xml"):
		if !utf8.Valid(body) {
			return strings.ToValidUTF8(string(body), "\uFFFD"), nil
		}
		return string(body), nil
	}
	return "", fmt.Errorf("fetch %s: content type %s is not text", u, mediaType)
}
