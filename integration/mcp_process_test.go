package integration

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
	"github.com/stepgate/stepgate/projection"
)

// serveEnv starts `engine serve` with extra environment variables (the
// user's configuration through XDG_CONFIG_HOME, secrets) and flags.
func serveEnv(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	s := &server{cmd: exec.Command(engineBin, append([]string{"serve"}, args...)...)}
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	s.cmd.Stderr = &s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "stepgate serving") {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait() // its stderr is copied in full once Wait returns
		t.Fatalf("engine serve did not start: %q %v\n%s", line, err, s.stderr.String())
	}
	return s
}

// stop ends the engine with SIGTERM and waits for it.
func (s *server) stop(t *testing.T) {
	t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

// xdgConfig writes the user's file under a fresh XDG_CONFIG_HOME and
// returns the environment variable that names it.
func xdgConfig(t *testing.T, text string) string {
	t.Helper()
	uf := writeUserFile(t, text)
	return "XDG_CONFIG_HOME=" + filepath.Dir(filepath.Dir(uf))
}

// An MCP call awaiting approval survives an engine process killed with
// SIGKILL: the restarted engine has no connection to the server, connects
// when the approval arrives (from another process, `engine approve`), and
// the call runs on the reconnected server exactly once.
func TestMCPAwaitingCallSurvivesRestart(t *testing.T) {
	bin := mcpBin(t)
	calls := filepath.Join(t.TempDir(), "calls")
	env := []string{xdgConfig(t, "agents:\n  build:\n    permission:\n      \"*\": allow\n      mcp__test__echo: ask\n"+
		"mcp:\n  test:\n    command: "+yamlList(bin.Command(mcptest.Flags{Calls: calls}))+"\n    trust: true\n")}
	data, addr, ws := t.TempDir(), freeAddr(t), t.TempDir()
	args := []string{"--data", data, "--listen", addr, "--host", "proc"}
	srv := serveEnv(t, env, args...)
	nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	if names := catalogNames(info.Catalog); !strings.Contains(strings.Join(names, " "), "mcp__test__echo") {
		t.Fatalf("catalogue %v", names)
	}
	out := must(ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c1", Tool: "mcp__test__echo", Args: json.RawMessage(`{"text":"after the restart"}`)}}}))
	if len(out.Tickets) != 1 {
		t.Fatalf("echo should ask: %+v", out)
	}
	srv.kill9(t)
	srv = serveEnv(t, env, args...)
	defer srv.stop(t)

	approve := exec.Command(engineBin, "approve", out.Tickets[0].ID, "--nats", "nats://"+addr, "--as", "ops")
	approve.Env = append(os.Environ(), env...)
	if b, err := approve.CombinedOutput(); err != nil {
		t.Fatalf("engine approve: %v\n%s\nengine:\n%s", err, b, srv.stderr.String())
	}
	r := must(ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: info.Run}))
	if got := resultText(r, 1); got != "after the restart" || !r.Steps[0].Final {
		t.Fatalf("the approved call's result %q (final %v), want it run on the reconnected server", got, r.Steps[0].Final)
	}
	b, _ := os.ReadFile(calls)
	if n := strings.Count(string(b), "echo "); n != 1 {
		t.Errorf("the server ran echo %d times, want exactly once:\n%s", n, b)
	}
}

// A secret passed by reference reaches the HTTP server (which checks the
// header, so the calls running prove it) and a stdio server (in its env)
// that leaks it in every way it can: on its stderr split over lines, cut
// at 1 KiB and base64'd; in its tool listing; in results holding its whole
// environment as text, base64, hex, percent-encoded, structured content,
// resources and an image; in an error. The secret, and each encoding of
// it, is nowhere else: not in any message of any stream, not in any file
// under the engine's data directory (bbolt checkpoints, the stream's
// store, output files), not in the engine's log at debug level, not in
// the run as `show` and `engine show --json` tell it, not in the report.
func TestMCPSecretsNeverStored(t *testing.T) {
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	secret := "sg-secret-" + hex.EncodeToString(buf)
	bin := mcpBin(t)
	srvMCP := bin.StartHTTP(t, "", mcptest.Flags{Auth: "Bearer " + secret})
	_, _ = rand.Read(buf)
	opToken := "sgop_" + hex.EncodeToString(buf)
	opSum := sha256.Sum256([]byte(opToken))
	env := []string{"STEPGATE_LOG_LEVEL=debug", "STEPGATE_TEST_TOKEN=" + secret,
		xdgConfig(t, "operators: {ops: {token_sha256: \""+hex.EncodeToString(opSum[:])+"\"}}\n"+
			"agents:\n  build:\n    permission:\n      \"*\": allow\n"+
			"mcp:\n  test:\n    url: "+strconv.Quote(srvMCP.URL)+"\n    headers: {Authorization: \"Bearer secret://STEPGATE_TEST_TOKEN\"}\n"+
			"  leak:\n    command: "+yamlList(bin.Command(mcptest.Flags{Leak: "LEAK_TOKEN"}))+"\n    env: {LEAK_TOKEN: \"secret://STEPGATE_TEST_TOKEN\"}\n")}
	data, addr, ws, web := t.TempDir(), freeAddr(t), t.TempDir(), freeAddr(t)
	srv := serveEnv(t, env, "--data", data, "--listen", addr, "--host", "proc", "--http", web)
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	var replies bytes.Buffer
	for i, tool := range []string{"mcp__test__echo", "mcp__test__environ", "mcp__test__fail", "mcp__leak__leak", "mcp__leak__leak_error", "mcp__leak__environ"} {
		out := must(ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: i + 1,
			Calls: []commands.CallRequest{{ID: "c", Tool: tool, Args: json.RawMessage(`{"text":"through the header"}`)}}}))
		if i == 0 && out.Results[0].Content != "through the header" {
			t.Fatalf("echo through the authenticated server: %+v\n%s", out.Results, srv.stderr.String())
		}
		if tool == "mcp__leak__leak" && (len(out.Results) != 1 || !strings.Contains(out.Results[0].Content, "LEAK_TOKEN=[redacted]")) {
			t.Fatalf("the leaking server's environment, redacted: %+v\n%s", out.Results, srv.stderr.String())
		}
		b, _ := json.Marshal(out)
		replies.Write(b)
	}
	ib, _ := json.Marshal(info)
	replies.Write(ib)
	run := must(ask[projection.Run](t, nc, "show", commands.ShowRequest{Run: info.Run}))
	shown, _ := json.Marshal(run)
	report := filepath.Join(t.TempDir(), "report.html")
	showJSON := engineOut(t, env, "show", "--json", "--nats", "nats://"+addr, info.Run)
	engineOut(t, env, "report", info.Run, "-o", report, "--nats", "nats://"+addr)
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	hits := func(where string, b []byte) {
		for _, form := range secretForms(secret, b) {
			t.Errorf("the secret (%s) is in %s", form, where)
		}
	}
	for _, path := range []string{"/api/runs", "/api/runs/" + info.Run, "/report/" + info.Run} {
		hits("GET "+path, webGet(t, "http://"+web+path, opToken))
	}
	hits("the replies to start_run and submit_step", replies.Bytes())
	hits("the run show answers", shown)
	hits("engine show --json", showJSON)
	hits("the report", page)
	if !bytes.Contains(shown, []byte("LEAK_TOKEN=[redacted]")) || !bytes.Contains(page, []byte("LEAK_TOKEN=[redacted]")) {
		t.Errorf("the leaked environment is not in the run or the report, redacted:\n%s", shown)
	}
	msgs := eachStreamMessage(t, nc, func(where string, data []byte, header nats.Header) {
		hits(where, data)
		for k, vs := range header {
			hits("a header of "+where, []byte(k+strings.Join(vs, "")))
		}
	})
	srv.stop(t)
	files := 0
	err = filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		hits(p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	log := srv.stderr.Bytes()
	hits("the engine's log", log)
	if !bytes.Contains(log, []byte("level=DEBUG")) && !bytes.Contains(log, []byte("level=INFO")) {
		t.Errorf("the engine's log is not at debug level:\n%s", log)
	}
	if !bytes.Contains(log, []byte("(split over two lines)")) || !bytes.Contains(log, []byte("# environ (base64)")) || !bytes.Contains(log, []byte("token [redacted]")) {
		t.Errorf("the leaking server's stderr is not in the engine's log:\n%s", log)
	}
	t.Logf("scanned %d messages, %d files under the data directory, %d bytes of the engine's log", msgs, files, len(log))
}

// webGet is the body of a GET of the web app as a signed-in operator; it
// fails the test unless the answer is 200.
func webGet(t *testing.T, u, token string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", u, res.StatusCode, err, b)
	}
	return b
}

// engineOut runs an engine verb with env and returns its stdout.
func engineOut(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(engineBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("engine %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// secretForms names the forms of secret found in b: the secret, its hex
// (either case), its base64 (standard or URL-safe) alone or inside longer
// encoded text at each of the three alignments, its percent-escapings, and
// any 8 bytes of it.
func secretForms(secret string, b []byte) []string {
	forms := map[string]string{
		"plaintext": secret, "hex": hex.EncodeToString([]byte(secret)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"query escaped": url.QueryEscape(secret), "path escaped": url.PathEscape(secret),
	}
	for name, enc := range map[string]*base64.Encoding{"base64": base64.RawStdEncoding, "base64url": base64.RawURLEncoding} {
		forms[name] = enc.EncodeToString([]byte(secret))
		for j := range 3 {
			inner := secret[j : j+(len(secret)-j)/3*3]
			forms[name+" inside longer text, from byte "+strconv.Itoa(j)] = enc.EncodeToString([]byte(inner))
		}
	}
	var found []string
	for name, f := range forms {
		if bytes.Contains(b, []byte(f)) {
			found = append(found, name)
		}
	}
	// A fragment: 8 bytes of the secret's random part (its first 10 bytes
	// are the fixed "sg-secret-"), as a server prints it split or cut.
	for i := 10; i+8 <= len(secret); i++ {
		if bytes.Contains(b, []byte(secret[i:i+8])) {
			found = append(found, "a fragment from byte "+strconv.Itoa(i))
			break
		}
	}
	return found
}
