package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// serve refuses a web app that would be open or in clear: --http off
// loopback without TLS, no operator in the user's file, half a TLS pair.
// Nothing is started: no data directory is made.
func TestServeHTTPRefusals(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	writeUserFile(t, home, "")
	data := filepath.Join(t.TempDir(), "data")
	cases := []struct {
		args []string
		want error
	}{
		{[]string{"--http", "127.0.0.1:0"}, errWebNoOperator},
		{[]string{"--http", "192.0.2.1:8080"}, errWebNoTLS},
		{[]string{"--http", "[::]:8080"}, errWebNoTLS},
		{[]string{"--http", "127.0.0.1:0", "--http-tls-cert", "c.pem"}, errWebTLSPair},
	}
	for _, c := range cases {
		err := run(context.Background(), append([]string{"serve", "--data", data}, c.args...), &syncbuf.Buffer{}, &syncbuf.Buffer{})
		if !errors.Is(err, c.want) {
			t.Errorf("serve %v = %v, want %v", c.args, err, c.want)
		} else {
			t.Logf("serve %s: %v", strings.Join(c.args, " "), err)
		}
	}
	writeUserFile(t, home, config.OperatorLine("ops-1", "sgop_x"))
	if err := run(context.Background(), []string{"serve", "--data", data, "--http", "192.0.2.1:8080"}, &syncbuf.Buffer{}, &syncbuf.Buffer{}); !errors.Is(err, errWebNoTLS) {
		t.Errorf("off loopback with an operator, no TLS: %v", err)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused serve made its data directory: %v", err)
	}
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "127.1.2.3": true, "0.0.0.0": false, "": false, "10.0.0.1": false, "example.com": false} {
		if loopback(host) != want {
			t.Errorf("loopback(%q) = %v", host, !want)
		}
	}
}

func writeUserFile(t *testing.T, home, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, "stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "stepgate", "config.yaml"), []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// With TLS the app answers over HTTPS only and its session cookie is
// Secure, HttpOnly and SameSite=Strict.
func TestServeHTTPWithTLS(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	writeUserFile(t, home, config.OperatorLine("ops-1", "sgop_tls-token"))
	certFile, keyFile, pool := selfSigned(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "", "--lease", "0", "--http", "127.0.0.1:0", "--http-tls-cert", certFile, "--http-tls-key", keyFile}, &out, &errs)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	re := regexp.MustCompile(`operators' inbox on (https://[0-9.:]+/)`)
	var base string
	for i := 0; i < 1500 && base == ""; i++ {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("serve did not say where: %s %s", out.String(), errs.String())
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(base+"login", url.Values{"token": {"sgop_tls-token"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{"sg_session=", "HttpOnly", "Secure", "SameSite=Strict"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	plain := strings.Replace(base, "https://", "http://", 1)
	if res, err := http.Get(plain + "login"); err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS listener: %d, want 400", res.StatusCode)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// them and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stepgate test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// engine operator token NAME prints a new token and the line that declares
// it; the line, pasted in the user's file, lets that token in and no other.
func TestOperatorToken(t *testing.T) {
	var out, errs syncbuf.Buffer
	if err := run(context.Background(), []string{"operator", "token", "ops-1"}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  (sgop_[A-Za-z0-9_-]{43})$`).FindStringSubmatch(out.String())
	line := regexp.MustCompile(`(?m)^  (operators: .*)$`).FindStringSubmatch(out.String())
	if m == nil || line == nil {
		t.Fatalf("output:\n%s", out.String())
	}
	home := t.TempDir()
	writeUserFile(t, home, line[1])
	ops, err := config.Loader{UserFile: filepath.Join(home, "stepgate", "config.yaml")}.Operators()
	if err != nil {
		t.Fatal(err)
	}
	if op, ok := ops.Match(m[1]); !ok || op.Name != "ops-1" {
		t.Errorf("the printed token does not match the printed line: %v %v", op, ok)
	}
	if strings.Contains(line[1], m[1]) {
		t.Errorf("the line holds the token itself: %s", line[1])
	}
	var out2 syncbuf.Buffer
	if err := run(context.Background(), []string{"operator", "token", "ops-1"}, &out2, &errs); err != nil {
		t.Fatal(err)
	}
	if m2 := regexp.MustCompile(`sgop_[A-Za-z0-9_-]{43}`).FindString(out2.String()); m2 == m[1] {
		t.Errorf("two tokens alike: %s", m2)
	}
	for _, bad := range [][]string{{"operator"}, {"operator", "token"}, {"operator", "token", "1x"}, {"operator", "mint", "ops-1"}} {
		if err := run(context.Background(), bad, &syncbuf.Buffer{}, &syncbuf.Buffer{}); exitCode(err) != 2 {
			t.Errorf("%v = %v, want a usage error", bad, err)
		}
	}
}
