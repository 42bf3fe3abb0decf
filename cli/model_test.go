package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/harness/builtin"
)

// TestModelBuiltinRefusesOtherAddresses: any address but 127.0.0.1 is
// refused (exit 3) with why and the command that serves it; a port off
// range is a usage error. The positive control, serving on 127.0.0.1,
// is TestModelBuiltinServesUntilSignalled.
func TestModelBuiltinRefusesOtherAddresses(t *testing.T) {
	t.Setenv("HOME", testenv.Home(t))
	for _, host := range []string{"0.0.0.0", "::1", "localhost", "::", "127.0.0.2", ""} {
		code, _, stderr := runLnk(t, "model", "builtin", "--host", host, "--port", "11435")
		if code != ExitRefused || !strings.HasPrefix(stderr, "lnk: refused: the built-in model listens on 127.0.0.1 only") ||
			!strings.Contains(stderr, "hint: lnk model builtin --port 11435 serves it on 127.0.0.1") {
			t.Fatalf("--host %q: %d %q", host, code, stderr)
		}
	}
	if code, _, stderr := runLnk(t, "model", "builtin", "--port", "70000"); code != ExitUsage || !strings.Contains(stderr, "not a TCP port") {
		t.Fatalf("--port 70000: %d %q", code, stderr)
	}
}

// startBuiltin runs `lnk model builtin args…` as its own process with
// home as HOME, and returns it and the base URL it printed.
func startBuiltin(t *testing.T, home string, args ...string) (*exec.Cmd, string, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), append([]string{"model", "builtin"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v; stderr %s", err, stderr.String())
	}
	return cmd, strings.TrimSpace(line), &stderr
}

// TestModelBuiltinServesUntilSignalled: lnk model builtin serves on
// 127.0.0.1, prints its base URL, records its port (600, in a 700
// folder), answers a real turn, is found by lnk model list --json, logs
// a refusal on stderr, and at SIGTERM (and SIGINT) ends with status 0,
// its record gone.
func TestModelBuiltinServesUntilSignalled(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			home := testenv.Home(t)
			cmd, url, stderr := startBuiltin(t, home, "--port", "0")
			port, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(url, "http://127.0.0.1:"), "/v1"))
			if err != nil || url != builtin.BaseURL(port) {
				t.Fatalf("printed %q", url)
			}
			rec := filepath.Join(home, ".lnk", "models", builtin.RecordName)
			st, err := os.Lstat(rec)
			if err != nil || st.Mode() != 0o600 {
				t.Fatalf("record: %v %v", st, err)
			}
			r, err := builtin.ReadRecord(home)
			if err != nil || r.Port != port || r.PID != cmd.Process.Pid || r.Obedient {
				t.Fatalf("record %+v %v", r, err)
			}
			// The listener is on 127.0.0.1 alone.
			if c, err := net.Dial("tcp4", "127.0.0.2:"+strconv.Itoa(port)); err == nil {
				c.Close()
				t.Fatal("it answers on 127.0.0.2")
			}
			resp, err := http.Post(url+"/chat/completions", "application/json",
				strings.NewReader(`{"model":"link-builtin","messages":[{"role":"user","content":"run ls work"}],"tools":[{"type":"function","function":{"name":"run__command","parameters":{"type":"object"}}}]}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"arguments":"{\"argv\":[\"ls\",\"work\"]}"`) {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			t.Setenv("HOME", home)
			code, out, errOut := runLnk(t, "model", "list", "--json")
			var list struct {
				Models []struct {
					Runtime, Name, Format string
					BaseURL               string `json:"base_url"`
				}
			}
			if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
				t.Fatalf("list: %d %s %s", code, out, errOut)
			}
			found := false
			for _, m := range list.Models {
				found = found || (m.Runtime == "builtin" && m.Name == builtin.ModelName && m.Format == "openai" && m.BaseURL == url)
			}
			if !found {
				t.Fatalf("lnk model list did not find it: %s", out)
			}
			code, out, _ = runLnk(t, "model", "list")
			if code != 0 || !strings.Contains(out, "RUNTIME") || !strings.Contains(out, "builtin  link-builtin  openai  "+url) {
				t.Fatalf("list: %d %q", code, out)
			}
			if resp, err := http.Get(url + "/nothing"); err != nil || resp.StatusCode != 404 {
				t.Fatalf("%v %v", resp, err)
			}
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ended with %v; stderr %s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatal("still serving after the signal")
			}
			if _, err := os.Lstat(rec); !os.IsNotExist(err) {
				t.Fatalf("the record stays: %v", err)
			}
			if !strings.Contains(stderr.String(), "lnk: model builtin: refused GET /v1/nothing: 404") {
				t.Fatalf("the refusal is not logged: %q", stderr.String())
			}
		})
	}
}

// TestModelBuiltinObedientSaysSo: --obedient warns on stderr, records
// itself obedient, and lnk model list marks it.
func TestModelBuiltinObedientSaysSo(t *testing.T) {
	home := testenv.Home(t)
	cmd, url, stderr := startBuiltin(t, home, "--obedient")
	if r, err := builtin.ReadRecord(home); err != nil || !r.Obedient || r.URL != url {
		t.Fatalf("%+v %v", r, err)
	}
	t.Setenv("HOME", home)
	if code, out, _ := runLnk(t, "model", "list"); code != 0 || !strings.Contains(out, "link-builtin (obedient)") {
		t.Fatalf("%d %q", code, out)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "lnk: --obedient: this model follows any instruction it reads") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

// TestModelBuiltinPortTaken: a port already held fails with why and a
// hint; nothing is recorded.
func TestModelBuiltinPortTaken(t *testing.T) {
	home := testenv.Home(t)
	t.Setenv("HOME", home)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code, _, stderr := runLnk(t, "model", "builtin", "--port", port)
	if code != ExitFailure || !strings.Contains(stderr, "listening on 127.0.0.1:"+port) || !strings.Contains(stderr, "hint: lnk model builtin --port 0") {
		t.Fatalf("%d %q", code, stderr)
	}
	if _, err := builtin.ReadRecord(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a record: %v", err)
	}
}

// TestModelBuiltinRecordRefused: where ~/.lnk/models is a link, nothing
// is served or written through it: exit 1, why, and what to fix.
func TestModelBuiltinRecordRefused(t *testing.T) {
	home := testenv.Home(t)
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
	os.MkdirAll(filepath.Join(home, "elsewhere"), 0o700)
	os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(home, ".lnk", "models"))
	code, out, stderr := runLnk(t, "model", "builtin")
	if code != ExitFailure || out != "" || !strings.HasPrefix(stderr, "lnk: recording the built-in model's port in ~/.lnk/models/builtin.json: ") ||
		!strings.Contains(stderr, "hint: ~/.lnk and ~/.lnk/models must be folders of yours") {
		t.Fatalf("%d %q %q", code, out, stderr)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "elsewhere")); len(ents) != 0 {
		t.Fatalf("written through the link: %v", ents)
	}
}
