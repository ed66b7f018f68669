package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
// header, so the calls running prove it) and is nowhere else: not in any
// message of any stream, not in any file under the engine's data directory
// (bbolt checkpoints, the stream's store, output files), not in the
// engine's log at debug level.
func TestMCPSecretsNeverStored(t *testing.T) {
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	secret := "sg-secret-" + hex.EncodeToString(buf)
	bin := mcpBin(t)
	srvMCP := bin.StartHTTP(t, "", mcptest.Flags{Auth: "Bearer " + secret})
	env := []string{"STEPGATE_LOG_LEVEL=debug", "STEPGATE_TEST_TOKEN=" + secret,
		xdgConfig(t, "agents:\n  build:\n    permission:\n      \"*\": allow\n"+
			"mcp:\n  test:\n    url: "+strconv.Quote(srvMCP.URL)+"\n    headers: {Authorization: \"Bearer secret://STEPGATE_TEST_TOKEN\"}\n")}
	data, addr, ws := t.TempDir(), freeAddr(t), t.TempDir()
	srv := serveEnv(t, env, "--data", data, "--listen", addr, "--host", "proc")
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	info := must(ask[commands.RunInfo](t, nc, "start_run", commands.StartRunRequest{Location: ws}))
	for i, tool := range []string{"mcp__test__echo", "mcp__test__environ", "mcp__test__fail"} {
		out := must(ask[commands.StepOutcome](t, nc, "submit_step", commands.SubmitStepRequest{Run: info.Run, Step: i + 1,
			Calls: []commands.CallRequest{{ID: "c", Tool: tool, Args: json.RawMessage(`{"text":"through the header"}`)}}}))
		if i == 0 && out.Results[0].Content != "through the header" {
			t.Fatalf("echo through the authenticated server: %+v\n%s", out.Results, srv.stderr.String())
		}
	}
	needles := [][]byte{[]byte(secret), []byte(base64.StdEncoding.EncodeToString([]byte(secret)))}
	hits := func(where string, b []byte) {
		for _, n := range needles {
			if bytes.Contains(b, n) {
				t.Errorf("the secret is in %s", where)
			}
		}
	}
	msgs := 0
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name := range js.StreamNames(ctx).Name() {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		si, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := si.State.FirstSeq; seq <= si.State.LastSeq && si.State.Msgs > 0; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				continue // deleted
			}
			msgs++
			hits("stream "+name+" message "+strconv.FormatUint(seq, 10), m.Data)
			for k, vs := range m.Header {
				hits("a header of stream "+name, []byte(k+strings.Join(vs, "")))
			}
		}
	}
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
	t.Logf("scanned %d messages, %d files under the data directory, %d bytes of the engine's log", msgs, files, len(log))
}
